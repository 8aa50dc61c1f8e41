// brainchat: the "Add a model connection" form (src/brainchat/ui/connect_form.py sends it with
// cl.AskElementMessage). Its answer goes back over the socket as the reply to that question only;
// the server never sends a key to it. The boxes are uncontrolled, so what is typed (the key
// above all) never becomes an attribute of the page, and the key box is a password box.
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { useRef, useState } from "react";

export default function ConnectionForm() {
  const form = useRef(null);
  const [sent, setSent] = useState(false);

  const submit = (event) => {
    event.preventDefault();
    if (sent) return;
    const data = new FormData(form.current);
    const value = (name) => String(data.get(name) || "");
    setSent(true);
    submitElement({
      name: value("name"),
      base_url: value("base_url"),
      api_key: value("api_key"),
    });
    form.current.reset(); // the key leaves the page with the answer
  };

  const cancel = () => {
    setSent(true);
    form.current.reset();
    cancelElement();
  };

  return (
    <form
      ref={form}
      id="brainchat-connection-form"
      onSubmit={submit}
      autoComplete="off"
      className="flex flex-col gap-3 max-w-xl rounded-md border p-4"
    >
      <div className="flex flex-col gap-1.5">
        <Label htmlFor="connection_name">Provider name</Label>
        <Input
          id="connection_name"
          name="name"
          maxLength={40}
          defaultValue={props.name || ""}
          placeholder="e.g. openai, deepseek, my llama.cpp"
        />
      </div>
      <div className="flex flex-col gap-1.5">
        <Label htmlFor="connection_base_url">OpenAI-compatible base URL</Label>
        <Input
          id="connection_base_url"
          name="base_url"
          required
          maxLength={2000}
          defaultValue={props.base_url || ""}
          placeholder="e.g. http://localhost:8080/v1 or https://api.openai.com/v1"
        />
      </div>
      <div className="flex flex-col gap-1.5">
        <Label htmlFor="connection_api_key">API key</Label>
        <Input
          id="connection_api_key"
          name="api_key"
          type="password"
          autoComplete="off"
          maxLength={4096}
          placeholder="empty for a local server without one"
        />
        <p className="text-xs text-muted-foreground">
          Kept for you only, encrypted in the store; never shown again.
        </p>
      </div>
      <div className="flex gap-2">
        <Button type="submit" id="connection_submit" disabled={sent}>
          Connect
        </Button>
        <Button
          type="button"
          variant="outline"
          id="connection_cancel"
          disabled={sent}
          onClick={cancel}
        >
          Cancel
        </Button>
      </div>
    </form>
  );
}
