// brainchat: Chainlit's page renders its attach button once before the project's settings arrive,
// with a built-in accept map whose "application/*" the file picker (react-dropzone) rejects, and
// logs a warning on every load. brainchat's own map is empty (any file reaches the server, which
// names what it cannot read), so that one warning is noise: it is dropped, every other is kept.
(() => {
  "use strict";
  const warn = console.warn.bind(console);
  const NOISE = 'Skipped "application/*" because it is not a valid MIME type.';
  console.warn = (...args) => {
    if (typeof args[0] === "string" && args[0].startsWith(NOISE)) return;
    warn(...args);
  };
})();

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

// brainchat: the Mode picker shows the mode in force; a pick is a request to the server. Chainlit's
// picker would show the pick at once and send nothing until the next message, so the UI could say
// "Agent" while the server still runs Chat. A pick (a click or Enter on an option) is stopped here
// before Chainlit sees it, the list is closed, and the choice is posted to the window, which
// Chainlit forwards to the app's on_window_message hook (src/brainchat/ui/modes.py): Chat switches
// at once, Agent asks first, and the server then sets the picker to the mode in force.
(() => {
  "use strict";
  const TRIGGER = "mode-picker-trigger-mode";
  const POPOVER = "mode-picker-popover-mode";

  function optionMode(item) {
    // by the option's icon (src/brainchat/ui/modes.py sets it): its name is in the user's language
    if (item.querySelector("svg.lucide-message-circle")) return "chat";
    if (item.querySelector("svg.lucide-bot")) return "agent";
    const name = item.querySelector(".font-medium") || item;
    const mode = name.textContent.trim().toLowerCase();
    return mode === "chat" || mode === "agent" ? mode : null;
  }

  function highlighted(popover) {
    // the picker marks the option its arrow keys and the mouse are on
    const items = [...popover.querySelectorAll("[cmdk-item]")];
    return (
      items.find((i) => i.classList.contains("text-accent-foreground")) ||
      items.find((i) => i.getAttribute("data-selected") === "true") ||
      null
    );
  }

  function pick(event, item) {
    // Chainlit never sees a pick, even one this script cannot read (then nothing changes)
    event.preventDefault();
    event.stopImmediatePropagation();
    const trigger = document.getElementById(TRIGGER);
    if (trigger) trigger.click(); // close the list; the picker keeps the mode in force
    const mode = item ? optionMode(item) : null;
    if (mode) window.postMessage({ brainchat: "mode", mode: mode }, window.location.origin);
  }

  document.addEventListener(
    "click",
    (e) => {
      const item = e.target instanceof Element ? e.target.closest(`#${POPOVER} [cmdk-item]`) : null;
      if (item) pick(e, item);
    },
    true,
  );
  document.addEventListener(
    "keydown",
    (e) => {
      if (e.key !== "Enter") return;
      const popover = document.getElementById(POPOVER);
      const at = e.target instanceof Element ? e.target : null;
      if (!popover || !at || !(popover.contains(at) || at.id === TRIGGER)) return;
      pick(e, highlighted(popover));
    },
    true,
  );
})();

// brainchat: the settings panel's number boxes carry min/max (src/brainchat/ui/panel.py); a value
// out of range is named under its box and the panel is not saved until it is fixed.
(() => {
  "use strict";
  const DIALOG = "chat-settings";

  function rangeText(box) {
    const label = document.querySelector(`label[for="${box.id}"]`);
    const name = label ? label.textContent.replace(/\s*\(.*\)\s*$/, "").trim() : box.id;
    return `${name} must be a number from ${box.min} to ${box.max}.`;
  }

  function mark(box) {
    const id = `${box.id}-range-error`;
    let note = document.getElementById(id);
    if (box.checkValidity() && box.value.trim() !== "") {
      box.removeAttribute("aria-invalid");
      if (note) note.remove();
      return true;
    }
    box.setAttribute("aria-invalid", "true");
    if (!note) {
      note = document.createElement("p");
      note.id = id;
      note.className = "brainchat-range-error";
      note.setAttribute("role", "alert");
      box.insertAdjacentElement("afterend", note);
    }
    note.textContent = rangeText(box);
    return false;
  }

  function boxes() {
    const dialog = document.getElementById(DIALOG);
    return dialog ? [...dialog.querySelectorAll('input[type="number"][min], input[type="number"][max]')] : [];
  }

  document.addEventListener(
    "input",
    (e) => {
      if (e.target instanceof HTMLInputElement && boxes().includes(e.target)) mark(e.target);
    },
    true,
  );
  document.addEventListener(
    "click",
    (e) => {
      const button = e.target instanceof Element ? e.target.closest(`#${DIALOG} #confirm`) : null;
      if (!button) return;
      const bad = boxes().filter((box) => !mark(box));
      if (bad.length) {
        e.preventDefault();
        e.stopImmediatePropagation();
        bad[0].focus();
      }
    },
    true,
  );
})();

// brainchat: a "—" cost is a link only for its tooltip (how to set the model's prices).
document.addEventListener(
  "click",
  (e) => {
    const tip = e.target instanceof Element ? e.target.closest('a[href$="#brainchat-tip"]') : null;
    if (tip) {
      e.preventDefault();
      e.stopImmediatePropagation();
    }
  },
  true,
);

// brainchat: an image or video in Markdown that the page may not load (the Content-Security-
// Policy lets only the app's own, data: and blob: ones in: src/brainchat/ui/headers.py) shows as
// a link instead of an empty box, so opening it is the user's choice. The element stays (hidden)
// where React put it; the link goes after Chainlit's frame around it and leaves with it.
(() => {
  "use strict";
  const LINK = "brainchat-remote-media";

  function isRemote(src) {
    try {
      const url = new URL(src, window.location.href);
      return url.protocol !== "data:" && url.protocol !== "blob:" && url.origin !== window.location.origin;
    } catch (e) {
      return false;
    }
  }

  function frameOf(media) {
    return media.closest(".message-content div[class*='max-w-sm']") || media;
  }

  function linkFor(media, src) {
    const link = document.createElement("a");
    link.className = LINK;
    link.href = src;
    link.target = "_blank";
    link.rel = "noopener noreferrer";
    const alt = (media.getAttribute("alt") || "").trim();
    link.textContent = `${alt || (media.tagName === "VIDEO" ? "video" : "image")} (not loaded: ${src})`;
    link.title = "A remote image or video is not loaded automatically; open it only if you trust it";
    link.brainchatMedia = media;
    link.dataset.src = src;
    return link;
  }

  function tidy() {
    for (const link of document.querySelectorAll(`a.${LINK}`)) {
      const media = link.brainchatMedia;
      if (!media || !media.isConnected || media.getAttribute("src") !== link.dataset.src) {
        if (media) frameOf(media).style.display = "";
        link.remove();
      }
    }
    for (const media of document.querySelectorAll(".message-content img[src], .message-content video[src]")) {
      const src = media.getAttribute("src") || "";
      if (media.dataset.brainchatLinked === src || !isRemote(src)) continue;
      media.dataset.brainchatLinked = src;
      const frame = frameOf(media);
      frame.style.display = "none";
      frame.insertAdjacentElement("afterend", linkFor(media, src));
    }
  }

  let queued = false;
  new MutationObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      tidy();
    });
  }).observe(document.documentElement, { subtree: true, childList: true, attributes: true, attributeFilter: ["src"] });
})();

// brainchat: the first move keeps what the user was doing. The conversation's first interaction
// (a message, or answering the Agent switch question) makes Chainlit load the thread list and then
// move the page to /thread/<id>, which builds the page anew: a new, empty message box, every dialog
// closed, the keyboard focus dropped. On a busy server the list takes seconds, and whatever the user
// did meanwhile was gone: a draft, a half-filled "Connect an MCP" form, the place of a keyboard user.
// So the move waits while a dialog or a list is open (the thread list's answer is held until it
// closes), a draft in the old box is put into the new one, and the focus goes to the new twin of
// the control that had it. None of this when the user opened another conversation (a click on a
// thread link or New chat just before), and a sent message empties the box first.
(() => {
  "use strict";
  const OPEN = '[role="dialog"], [role="alertdialog"], [role="listbox"], [role="menu"]'; // not tooltips
  const fetchNow = window.fetch.bind(window);

  function moving(input) {
    // the thread list, asked for while the page has not yet made its first move
    const url = new URL(typeof input === "string" ? input : input.url, window.location.href);
    return /\/project\/threads$/.test(url.pathname) && !/\/thread\/[^/]+\/?$/.test(window.location.pathname);
  }

  function closed() {
    return new Promise((done) => {
      const look = () => (document.querySelector(OPEN) ? setTimeout(look, 200) : done());
      look();
    });
  }

  window.fetch = async function (input, init) {
    const answer = await fetchNow(input, init);
    if (!moving(input) || !document.querySelector(OPEN)) return answer;
    const body = await answer.arrayBuffer();
    await closed();
    return new Response(body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
  };
})();
(() => {
  "use strict";
  const INPUT = "chat-input";
  let box = null;
  let path = window.location.pathname;
  let leftAt = -Infinity; // when the user last clicked to open another conversation
  let focused = []; // the last two elements that took the focus, newest first

  function isThread(p) {
    return /\/thread\/[^/]+\/?$/.test(p);
  }

  function put(into, text) {
    // the textarea's own setter, then an input event: React's onChange takes the text as typed
    const setter = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").set;
    setter.call(into, text);
    into.dispatchEvent(new Event("input", { bubbles: true }));
  }

  function check() {
    const now = document.getElementById(INPUT);
    if (!(now instanceof HTMLTextAreaElement) || now === box) return;
    const old = box;
    const before = path;
    box = now;
    path = window.location.pathname;
    if (performance.now() - leftAt < 10000 || !(before === path || (!isThread(before) && isThread(path)))) return;
    const draft = old ? old.value : "";
    if (draft && !now.value) put(now, draft);
    refocus(now);
  }

  function refocus(newBox) {
    // the control that had the focus was rebuilt: its twin (same id) takes it back from the new
    // message box (Chainlit focuses that on every build)
    const was = focused.find((el) => el && !el.isConnected && el.id && el.id !== INPUT);
    const twin = was ? document.getElementById(was.id) : null;
    const at = document.activeElement;
    if (twin && (at === newBox || at === document.body || at === null)) twin.focus();
    focused = [];
  }

  document.addEventListener(
    "click",
    (e) => {
      const at = e.target instanceof Element ? e.target : null;
      if (at && at.closest('a[href*="/thread/"], #new-chat-button, #new-chat-dialog #confirm')) {
        leftAt = performance.now();
      }
    },
    true,
  );
  document.addEventListener("focusin", (e) => {
    focused = [e.target, focused[0]];
  });
  document.addEventListener("focusout", (e) => {
    // the user moved away (the control is still there and nothing has the focus): forget it
    setTimeout(() => {
      if (e.target.isConnected && document.activeElement === document.body) focused = [];
    });
  });
  new MutationObserver(check).observe(document.documentElement, { subtree: true, childList: true });
})();

// brainchat: the page stays quiet and in the user's hands (issue #40). Text in the three
// languages of the interface, picked from the browser's language as Chainlit picks its own.
(() => {
  "use strict";
  const lang = (navigator.language || "en").toLowerCase();
  const at = !lang.startsWith("zh") ? 0 : /^zh-(tw|hk|mo|hant)/.test(lang) ? 2 : 1;
  const TEXT = {
    showAll: ["Show all", "显示全部", "顯示全部"],
    showLess: ["Show less", "收起", "收起"],
  };
  const say = (key) => TEXT[key][at];
  const OPEN = '[role="dialog"], [role="alertdialog"], [role="listbox"], [role="menu"]';

  // The chat usage line (src/brainchat/ui/run_end.py) unfolds its table in place; brainchat.css
  // folds the table that follows the line while the link is not expanded.
  document.addEventListener(
    "click",
    (e) => {
      const link = e.target instanceof Element ? e.target.closest('a[href$="#brainchat-usage"]') : null;
      if (!link) return;
      e.preventDefault();
      e.stopImmediatePropagation();
      link.setAttribute("aria-expanded", link.getAttribute("aria-expanded") === "true" ? "false" : "true");
    },
    true,
  );

  // Esc stops a run, as the stop button does, unless something open (a dialog, a list, a menu)
  // takes the Esc for itself. On the window in the capture phase: before a dialog closes on it.
  window.addEventListener(
    "keydown",
    (e) => {
      if (e.key !== "Escape" || e.isComposing || e.defaultPrevented) return;
      if (document.querySelector(OPEN)) return;
      const stop = document.getElementById("stop-button");
      if (!stop) return;
      e.preventDefault();
      stop.click();
    },
    true,
  );

  // Copy gives clean Markdown: a cited source's number stays "[1]" (its link to the source is the
  // page's markup, the sources are listed under the answer), a tooltip value keeps its text, and
  // the chat usage line and its table are left out. Chainlit's copy buttons write with
  // navigator.clipboard.writeText; the markup cleaned here is brainchat's own (ui/format.py).
  const clipboard = navigator.clipboard;
  if (clipboard && clipboard.writeText) {
    const write = clipboard.writeText.bind(clipboard);
    const clean = (text) =>
      String(text)
        .replace(/\n*\[[^\]\n]*\]\(#brainchat-usage(?: "[^"]*")?\)[\s\S]*$/, "")
        .replace(/\[\\\[(\d{1,3})\\\]\]\(<[^>\s]*>(?: "[^"]*")?\)/g, "[$1]")
        .replace(/\[([^\]\n]*)\]\(#brainchat-tip(?: "[^"]*")?\)/g, "$1");
    clipboard.writeText = (text) => write(clean(text));
    window.brainchatCleanCopy = clean; // for the tests
    // A message's copy button writes its text and its HTML as one item: both are cleaned (the
    // HTML loses the usage line and its table; its source links are real links there).
    const cleanHtml = (html) => {
      const doc = new DOMParser().parseFromString(html, "text/html");
      for (const link of doc.querySelectorAll('a[href$="#brainchat-usage"]')) {
        const line = link.parentElement;
        if (line && line.nextElementSibling) line.nextElementSibling.remove();
        (line || link).remove();
      }
      for (const tip of doc.querySelectorAll('a[href$="#brainchat-tip"]')) tip.replaceWith(tip.textContent);
      return doc.body.innerHTML;
    };
    const cleanItem = async (item) => {
      const parts = {};
      for (const type of item.types) {
        const blob = await item.getType(type);
        if (type === "text/plain") parts[type] = new Blob([clean(await blob.text())], { type });
        else if (type === "text/html") parts[type] = new Blob([cleanHtml(await blob.text())], { type });
        else parts[type] = blob;
      }
      return new ClipboardItem(parts);
    };
    if (clipboard.write && window.ClipboardItem) {
      const writeItems = clipboard.write.bind(clipboard);
      clipboard.write = async (items) => writeItems(await Promise.all([...items].map(cleanItem)));
    }
  }

  // A long message of the user folds to a few lines, with "Show all" / "Show less".
  const FOLD_PX = 320;
  function foldLong() {
    for (const box of document.querySelectorAll('[data-step-type="user_message"] .message-content')) {
      if (box.dataset.brainchatFold) continue;
      if (box.scrollHeight <= FOLD_PX * 1.5) continue;
      box.dataset.brainchatFold = "folded";
      const toggle = document.createElement("button");
      toggle.type = "button";
      toggle.className = "brainchat-fold-toggle";
      toggle.textContent = say("showAll");
      toggle.setAttribute("aria-expanded", "false");
      toggle.addEventListener("click", () => {
        const open = box.dataset.brainchatFold === "folded";
        box.dataset.brainchatFold = open ? "open" : "folded";
        toggle.textContent = say(open ? "showLess" : "showAll");
        toggle.setAttribute("aria-expanded", String(open));
        if (!open) box.scrollIntoView({ block: "nearest" });
      });
      box.insertAdjacentElement("afterend", toggle);
    }
  }

  // A question that waits for the user (the Agent switch, a tool's approval) comes into view:
  // it is added at the foot of the chat, which does not scroll by itself without a message sent.
  const seenAsks = new WeakSet();
  function showAsks() {
    const rows = document.querySelectorAll(".step .ai-message div.flex.items-center.gap-1.flex-wrap");
    for (const row of rows) {
      if (seenAsks.has(row) || !row.querySelector("button")) continue;
      seenAsks.add(row);
      const last = [...document.querySelectorAll(".step")].pop();
      if (last && last.contains(row)) row.scrollIntoView({ block: "center" });
    }
  }

  let queued = false;
  new MutationObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      foldLong();
      showAsks();
    });
  }).observe(document.documentElement, { subtree: true, childList: true });
})();

// brainchat: the mode of a new chat follows the user's last choice (src/brainchat/ui/modes.py).
// The server says which mode the user chose (kept here, per browser, like the theme) and which
// mode a conversation shows; a new one (not an opened thread) asks back for the remembered mode.
(() => {
  "use strict";
  const KEY = "brainchat.mode";
  const MODES = ["chat", "agent"];

  function stored() {
    try {
      const mode = window.localStorage.getItem(KEY);
      return MODES.includes(mode) ? mode : null;
    } catch (e) {
      return null; // storage refused (a private window's policy): new chats keep the default
    }
  }

  window.addEventListener("message", (e) => {
    const data = e.data;
    if (e.source !== window || !data || typeof data !== "object" || !MODES.includes(data.mode)) return;
    if (data.brainchat === "mode-chosen") {
      try {
        window.localStorage.setItem(KEY, data.mode);
      } catch (err) {
        // not kept: nothing else changes
      }
    } else if (data.brainchat === "mode-shown") {
      if (/\/thread\/[^/]+\/?$/.test(window.location.pathname)) return; // an opened thread keeps its own
      const want = stored();
      if (want && want !== data.mode) {
        window.postMessage({ brainchat: "mode", mode: want, remembered: true }, window.location.origin);
      }
    }
  });
})();
