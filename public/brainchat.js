// brainchat: refuse a chat message over the size limit in the browser, with a visible notice.
// Chainlit's socket drops a message over ~1 MB without a word, and pasting ~1 MB into the
// message box freezes the tab (a React textarea re-rendered on every change). So a paste or
// drop that would take a text box past the limit is stopped before the browser inserts it, and
// sending a message box that is already over it (typed, filled by a script) is stopped too.
(() => {
  "use strict";
  // Keep in step with MAX_MESSAGE_CHARS in src/brainchat/ui/message_limit.py.
  const MAX_MESSAGE_CHARS = 200000;
  const NOTICE_ID = "brainchat-limit-notice";

  function sizeOf(chars, sample) {
    // UTF-8 size from a sample: encoding a whole megabyte on every keystroke would be wasteful.
    const part = sample.slice(0, 20000);
    const bytes = part ? (new TextEncoder().encode(part).length / part.length) * chars : chars;
    return bytes >= 1e6 ? (bytes / 1e6).toFixed(1) + " MB" : Math.round(bytes / 1e3) + " KB";
  }

  function showNotice(chars, sample, what) {
    let box = document.getElementById(NOTICE_ID);
    if (!box) {
      box = document.createElement("div");
      box.id = NOTICE_ID;
      box.setAttribute("role", "alert");
      const text = document.createElement("span");
      const close = document.createElement("button");
      close.type = "button";
      close.textContent = "×";
      close.setAttribute("aria-label", "Dismiss");
      close.addEventListener("click", hideNotice);
      box.append(text, close);
      document.body.appendChild(box);
    }
    box.firstChild.textContent =
      `This message is ${sizeOf(chars, sample)} (${chars.toLocaleString("en-US")} characters); ` +
      `the limit is ${MAX_MESSAGE_CHARS.toLocaleString("en-US")} characters (about 200 KB), ` +
      `so ${what}. Shorten it or split it into several messages.`;
    box.hidden = false;
  }

  function hideNotice() {
    const box = document.getElementById(NOTICE_ID);
    if (box) box.hidden = true;
  }

  function isTextBox(el) {
    return el instanceof HTMLTextAreaElement || el instanceof HTMLInputElement;
  }

  function stop(event) {
    event.preventDefault();
    event.stopImmediatePropagation();
  }

  // A paste or drop: the length the box would have once the text replaces the selection.
  function guardInsert(event, data) {
    const box = event.target;
    if (!isTextBox(box) || !data) return;
    const text = data.getData("text/plain") || data.getData("text") || "";
    const selected = (box.selectionEnd || 0) - (box.selectionStart || 0);
    const total = box.value.length - selected + text.length;
    if (total > MAX_MESSAGE_CHARS) {
      stop(event);
      showNotice(total, text, "it was not added to the message box");
    }
  }

  function chatInputOver() {
    const box = document.getElementById("chat-input");
    return box && box.value.length > MAX_MESSAGE_CHARS ? box : null;
  }

  function guardSend(event) {
    const box = chatInputOver();
    if (box) {
      stop(event);
      showNotice(box.value.length, box.value, "it was not sent");
    } else {
      hideNotice();
    }
  }

  // Capture phase on the document: these run before React's own handlers on the root.
  document.addEventListener("paste", (e) => guardInsert(e, e.clipboardData), true);
  document.addEventListener("drop", (e) => guardInsert(e, e.dataTransfer), true);
  document.addEventListener(
    "keydown",
    (e) => {
      if (e.key === "Enter" && !e.shiftKey && e.target && e.target.id === "chat-input") {
        guardSend(e);
      }
    },
    true,
  );
  document.addEventListener(
    "click",
    (e) => {
      if (e.target instanceof Element && e.target.closest("#chat-submit")) guardSend(e);
    },
    true,
  );
  document.addEventListener(
    "input",
    (e) => {
      const box = chatInputOver();
      if (box && e.target === box) {
        showNotice(box.value.length, box.value, "it cannot be sent");
      }
    },
    true,
  );
})();
