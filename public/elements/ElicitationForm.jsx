// brainchat: an MCP server asks the user for input mid-call (#25 elicitation, form mode).
// src/brainchat/ui/mcp_elicit.py sends it with cl.AskElementMessage; its answer goes back over
// the socket as the reply to that question only. One box per field of the server's schema:
// text (email, URI, date, date-time), number, whole number, yes/no, one option, several options.
// Accept sends the answers (the server side checks them again and shows the form once more with
// what was wrong); Decline says no; Cancel dismisses. Secret fields are password boxes whose
// value the server never sends back to the page.
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { useRef, useState } from "react";

const INPUT_TYPE = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" };

function Box({ field, id, value }) {
  const common = { id, name: field.name, required: field.required };
  if (field.kind === "boolean") {
    return (
      <input type="checkbox" {...common} required={false} defaultChecked={value === true} />
    );
  }
  if (field.kind === "enum") {
    return (
      <select {...common} defaultValue={value ?? ""} className="rounded-md border p-2 bg-background">
        <option value="">{field.required ? "Choose…" : "(none)"}</option>
        {field.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    );
  }
  if (field.kind === "multi") {
    const chosen = Array.isArray(value) ? value : [];
    return (
      <div id={id} className="flex flex-col gap-1">
        {field.options.map((o, i) => (
          <label key={o.value} className="flex gap-2 items-center text-sm">
            <input
              type="checkbox"
              name={field.name}
              value={o.value}
              id={`${id}_${i}`}
              defaultChecked={chosen.includes(o.value)}
            />
            {o.label}
          </label>
        ))}
      </div>
    );
  }
  const numeric = field.kind === "number" || field.kind === "integer";
  return (
    <Input
      {...common}
      type={field.secret ? "password" : numeric ? "number" : INPUT_TYPE[field.format] || "text"}
      step={field.kind === "integer" ? 1 : numeric ? "any" : undefined}
      min={field.minimum ?? undefined}
      max={field.maximum ?? undefined}
      minLength={field.min_length ?? undefined}
      maxLength={field.max_length ?? undefined}
      autoComplete="off"
      defaultValue={field.secret ? "" : value ?? ""}
    />
  );
}

export default function ElicitationForm() {
  const form = useRef(null);
  const [sent, setSent] = useState(false);
  const fields = props.fields || [];
  const values = props.values || {};
  const errors = props.errors || {};

  const answers = () => {
    const data = new FormData(form.current);
    const out = {};
    for (const f of fields) {
      if (f.kind === "boolean") out[f.name] = data.get(f.name) !== null;
      else if (f.kind === "multi") out[f.name] = data.getAll(f.name).map(String);
      else out[f.name] = String(data.get(f.name) ?? "");
    }
    return out;
  };

  const accept = (event) => {
    event.preventDefault();
    if (sent) return;
    setSent(true);
    submitElement({ action: "accept", values: answers() });
    form.current.reset(); // a secret leaves the page with the answer
  };

  const decline = () => {
    if (sent) return;
    setSent(true);
    form.current.reset();
    submitElement({ action: "decline" });
  };

  const cancel = () => {
    if (sent) return;
    setSent(true);
    form.current.reset();
    cancelElement();
  };

  return (
    <form
      ref={form}
      id="brainchat-elicitation-form"
      onSubmit={accept}
      noValidate
      autoComplete="off"
      className="flex flex-col gap-3 max-w-xl rounded-md border p-4"
    >
      {fields.map((f, i) => (
        <div key={f.name} className="flex flex-col gap-1.5">
          <Label htmlFor={`elicit_field_${i}`}>
            {f.label}
            {f.required ? " *" : ""}
          </Label>
          <Box
            field={f}
            id={`elicit_field_${i}`}
            value={f.name in values ? values[f.name] : f.default}
          />
          <p className="text-xs text-muted-foreground">
            {f.description ? `${f.description} · ` : ""}
            {f.hint}
          </p>
          {errors[f.name] ? (
            <p className="text-xs text-red-600" role="alert">
              {f.label} {errors[f.name]}
            </p>
          ) : null}
        </div>
      ))}
      <div className="flex gap-2">
        <Button type="submit" id="elicit_accept" disabled={sent}>
          Accept
        </Button>
        <Button type="button" variant="outline" id="elicit_decline" disabled={sent} onClick={decline}>
          Decline
        </Button>
        <Button type="button" variant="ghost" id="elicit_cancel" disabled={sent} onClick={cancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}
