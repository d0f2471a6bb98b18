// The words of a refusal (a 413 or 429 notice, limits/), as text: DOMParser runs no script.
function noticeText(html) {
  return new DOMParser().parseFromString(html, "text/html").body.textContent.trim();
}

// Streams answers into the chat: the ask form posts to its data-stream-url
// (notebooks:ask_stream, server-sent events read with fetch), the model's raw text appears
// as it is written, then the stored message replaces it, rendered with its [n] links.
// Without JavaScript the form posts to notebooks:ask and the page reloads with the answer.
(function () {
  "use strict";

  function bubble(className, text) {
    const div = document.createElement("div");
    div.className = "message " + className;
    const p = document.createElement("p");
    p.className = "message-text";
    p.textContent = text; // the raw model text is never parsed as HTML
    div.append(p);
    return div;
  }

  // The passages the answer is written from, shown before its first word: source, page
  // and the sentence that matches the question (all as text, never parsed as HTML).
  function showEvidence(form, answer, text, passages) {
    if (!passages || !passages.length) return;
    const box = document.createElement("div");
    box.className = "evidence";
    const label = document.createElement("p");
    label.className = "mode-label";
    label.textContent = say(form, "evidence", "The passages the answer is written from:");
    const list = document.createElement("ol");
    for (const passage of passages) {
      const item = document.createElement("li");
      const place = passage.page ? passage.source + ", page " + passage.page : passage.source;
      item.textContent = "[" + passage.n + "] " + place + ": “" + passage.sentence + "”";
      list.append(item);
    }
    box.append(label, list);
    answer.insertBefore(box, text);
  }

  // The complete events at the start of `buffer` ({name, data}) and what is left of it.
  function takeEvents(buffer) {
    const events = [];
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      if (data) events.push({ name: name, data: JSON.parse(data) });
    }
    return [events, buffer];
  }

  // The form's translated messages (data-msg-* attributes), with an English fallback.
  function say(form, name, fallback) {
    return form.dataset["msg" + name.charAt(0).toUpperCase() + name.slice(1)] || fallback;
  }

  async function ask(form) {
    const chat = document.getElementById("chat");
    const askButton = form.querySelector("button[type=submit]");
    const stopButton = form.querySelector(".stop-button");
    const status = form.querySelector(".ask-status");
    const textarea = form.querySelector("textarea[name=question]");
    const body = new FormData(form);
    const question = String(body.get("question") || "").trim();
    const controller = new AbortController();
    const echo = bubble("message-user", question);
    const answer = bubble("message-assistant message-streaming", "");
    const text = answer.querySelector(".message-text");
    chat.append(echo, answer);
    textarea.value = "";
    form.dataset.asking = "true";
    askButton.disabled = true;
    stopButton.hidden = false;
    stopButton.onclick = function () { controller.abort(); };
    status.textContent = say(form, "searching", "Searching your sources and writing an answer…");

    let done = null;
    let error = null;
    let stopped = false;
    try {
      const response = await fetch(form.dataset.streamUrl, {
        method: "POST",
        body: body,
        headers: { "HX-Request": "true" },
        signal: controller.signal,
      });
      if (response.status === 402) {
        document.getElementById("credit-notice").innerHTML = await response.text();
        error = say(form, "credit", "Your credit is spent.");
      } else if (response.status === 429 || response.status === 413 || response.status === 503) {
        // The abuse limits' notice (limits/), or the database outage's (ops/outage.py),
        // shown in the chat where the question was asked.
        error = noticeText(await response.text());
      } else if (!response.ok) {
        error = say(form, "http", "Loupe could not answer (HTTP {status}).")
          .replace("{status}", String(response.status));
      } else {
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) break;
          let events;
          [events, buffer] = takeEvents(buffer + chunk.value);
          for (const event of events) {
            if (event.name === "evidence") showEvidence(form, answer, text, event.data.passages);
            else if (event.name === "delta") text.textContent += event.data.text;
            else if (event.name === "done") done = event.data;
            else if (event.name === "error") error = event.data.error;
          }
        }
      }
    } catch (exc) {
      if (exc.name === "AbortError") stopped = true;
      else error = say(form, "lost", "The connection to Loupe was lost before the answer was complete.");
    } finally {
      delete form.dataset.asking;
      askButton.disabled = false;
      stopButton.hidden = true;
      status.textContent = "";
    }

    if (done) {
      const field = document.getElementById("conversation-id");
      if (field) field.value = done.conversation;
      history.pushState({}, "", done.conversation_url);
      // htmx swaps the rendered message in, with the conversation list out of band, and
      // wires its [n] links to the passage panel.
      htmx.ajax("GET", done.message_url, { target: answer, swap: "outerHTML" });
      return;
    }
    // Stopped or failed: nothing was stored; the question goes back into the form.
    if (!textarea.value) textarea.value = question;
    if (stopped) {
      echo.classList.add("message-stopped");
      answer.classList.add("message-stopped");
      const note = document.createElement("p");
      note.className = "mode-label";
      note.textContent = say(form, "stopped", "Stopped. This answer was not saved.");
      answer.append(note);
      return;
    }
    echo.remove();
    answer.className = "message message-error";
    answer.setAttribute("role", "alert");
    text.textContent = error || say(form, "unstored", "The answer ended without being stored.");
  }

  document.addEventListener("submit", function (event) {
    const form = event.target.closest("form[data-stream-url]");
    if (!form || !window.fetch || !window.TextDecoderStream) return; // the plain POST
    event.preventDefault();
    // One answer at a time: Enter in the box submits even while the button is disabled,
    // and a second question would be answered without the first in its conversation.
    // What was typed stays in the box, to be sent when the answer has ended.
    if (form.dataset.asking) return;
    ask(form);
  });
})();

// The notebook page's other behaviour, kept here rather than in inline handlers so that a
// strict Content-Security-Policy (script-src 'self') allows all of it.
(function () {
  "use strict";

  // Forms marked data-reset-on-success are cleared after htmx posted them successfully.
  document.addEventListener("htmx:afterRequest", function (event) {
    const form = event.detail.elt;
    if (form instanceof HTMLFormElement && form.hasAttribute("data-reset-on-success") &&
        event.detail.successful) {
      form.reset();
    }
  });

  // The highlighted sentence of a long passage, scrolled to the middle of the passage's own
  // box (only that box scrolls, not the page).
  function showHighlight(root) {
    const box = root.querySelector(".chunk-text");
    const mark = box && box.querySelector("mark");
    if (!mark || box.scrollHeight <= box.clientHeight) return;
    const offset = mark.getBoundingClientRect().top - box.getBoundingClientRect().top;
    box.scrollTop += offset - (box.clientHeight - mark.getBoundingClientRect().height) / 2;
  }

  // A passage opened from a [n]: bring it into view and give it the focus, so keyboard
  // and screen-reader users land on it; Escape or its close button closes it.
  document.addEventListener("htmx:afterSwap", function (event) {
    const target = event.detail.target;
    if (target && target.id === "passage" && target.firstElementChild) {
      target.scrollIntoView({ block: "nearest" });
      target.focus({ preventScroll: true });
      showHighlight(target);
    }
  });
  // The citation's own page (opened without htmx).
  document.addEventListener("DOMContentLoaded", function () {
    const passage = document.querySelector(".passage-panel");
    if (passage) showHighlight(passage);
  });

  // The empty chat's hint asks for a source until one is ready, then says to ask: the
  // sources list refreshes itself (htmx) while they are read, the rest of the page does not.
  function updateChatHint() {
    const hint = document.querySelector(".chat-empty[data-msg-ready]");
    if (hint && document.querySelector("#sources .source-ready")) {
      hint.textContent = hint.dataset.msgReady;
      hint.removeAttribute("data-msg-ready");
    }
  }
  document.addEventListener("htmx:afterSettle", updateChatHint);

  // The sources list reloads itself every 2 s while a source is read, and other answers
  // (a tick, an upload, a note made a source) bring it anew: a summary or guide the reader
  // opened stays open through each, the progress beside it changing in place.
  const opened = new Set();
  document.addEventListener("toggle", function (event) {
    const details = event.target;
    if (!(details instanceof HTMLDetailsElement) || !details.id) return;
    if (details.open) opened.add(details.id);
    else opened.delete(details.id);
  }, true);  // toggle does not bubble
  // The answer's HTML with the reader's open summaries and guides open, before it is swapped
  // in (so nothing closes, even for a frame). A <template> parses it without running it.
  function keepOpen(html) {
    const ids = Array.from(opened).filter(function (id) { return html.includes('id="' + id + '"'); });
    if (!ids.length) return html;
    const template = document.createElement("template");
    template.innerHTML = html;
    for (const id of ids) {
      const details = template.content.getElementById(id);
      if (details instanceof HTMLDetailsElement) details.open = true;
    }
    return template.innerHTML;
  }
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (typeof event.detail.serverResponse === "string") {
      event.detail.serverResponse = keepOpen(event.detail.serverResponse);
    }
  });

  // Phones: the notebook's parts as tabs (app.css shows the chosen one on a narrow screen).
  // A link to anything inside a part (a tab, the skip link to the question, an address
  // ending in #panel-notes) shows that part first.
  const parts = document.querySelector(".notebook[data-tab]");
  function partOf(element) {
    const part = element && element.closest("[data-part]");
    return part && part.dataset.part;
  }
  function showPart(name) {
    parts.dataset.tab = name;
    document.querySelectorAll(".workspace-tabs a[data-tab]").forEach(function (tab) {
      tab.setAttribute("aria-current", String(tab.dataset.tab === name));
    });
  }
  if (parts) {
    parts.classList.add("tabbed");
    const partInAddress = function () {
      return partOf(location.hash && document.getElementById(location.hash.slice(1)));
    };
    showPart(partInAddress() || parts.dataset.tab);
    window.addEventListener("hashchange", function () {
      const name = partInAddress();
      if (name) showPart(name);
    });
    document.addEventListener("click", function (event) {
      const link = event.target.closest && event.target.closest("a[href^='#']");
      const name = link && partOf(document.getElementById(link.getAttribute("href").slice(1)));
      if (!name) return;
      showPart(name);
      if (link.dataset.tab) {
        // A passage opened in one part (an answer's, a note's, a document's [n]) would
        // stand above the next part chosen: choosing a part closes it.
        const passage = document.getElementById("passage");
        if (passage) passage.replaceChildren();
        document.querySelectorAll(".cite-open").forEach(function (a) { a.classList.remove("cite-open"); });
        event.preventDefault();
        history.replaceState(null, "", link.hash);
        parts.scrollIntoView({ block: "start" });
      }
    });
  }

  // The share dialog: the Share link loads the sharing panel (htmx) into a <dialog>, which
  // opens once it is there; without JavaScript the link is an ordinary page.
  document.addEventListener("htmx:afterRequest", function (event) {
    const link = event.detail.elt;
    const dialog = document.getElementById("share-dialog");
    if (dialog && link instanceof HTMLElement && link.matches(".share-link") &&
        event.detail.successful && !dialog.open) {
      dialog.showModal();
    }
  });

  function closePassage() {
    const passage = document.getElementById("passage");
    if (!passage || !passage.firstElementChild) return;
    passage.replaceChildren();
    const last = document.querySelector(".cite.cite-open");
    if (last) { last.classList.remove("cite-open"); last.focus(); }
  }

  document.addEventListener("click", function (event) {
    if (event.target.closest(".passage-close")) closePassage();
    const cite = event.target.closest("a[hx-target='#passage']");
    if (cite) {
      document.querySelectorAll(".cite-open").forEach(function (a) { a.classList.remove("cite-open"); });
      cite.classList.add("cite-open");
    }
  });

  document.addEventListener("keydown", function (event) {
    // Escape in an open dialog (the page large) closes that dialog only.
    if (event.key === "Escape" && !document.querySelector("dialog[open]")) closePassage();
    // Enter in the question box sends it, as in every chat; Shift+Enter makes a new line,
    // and Enter that confirms a word an input method is composing does neither.
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing &&
        event.target.matches("form[data-stream-url] textarea")) {
      event.preventDefault();
      event.target.form.requestSubmit();
    }
  });

  // The cited page large: a click on the page in the passage opens the same picture (its
  // highlight drawn in) at full size in a dialog that scrolls, and pinches on a phone.
  document.addEventListener("click", function (event) {
    const link = event.target.closest && event.target.closest("a.page-zoom");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey) return;
    event.preventDefault();
    let dialog = document.getElementById("page-dialog");
    if (!dialog) {
      dialog = document.createElement("dialog");
      dialog.id = "page-dialog";
      dialog.className = "page-dialog";
      const close = document.createElement("form");
      close.method = "dialog";
      close.className = "dialog-close";
      const button = document.createElement("button");
      button.type = "submit";
      button.className = "link-button";
      close.append(button);
      // Drawing a page takes seconds on a busy server: until the picture is there the
      // dialog says so, instead of standing open as an empty strip.
      const status = document.createElement("p");
      status.className = "page-dialog-status";
      status.setAttribute("role", "status");
      const frame = document.createElement("div");
      frame.className = "page-dialog-frame";
      const picture = document.createElement("img");
      picture.addEventListener("load", function () { dialog.classList.remove("loading"); });
      picture.addEventListener("error", function () {
        status.textContent = dialog.dataset.msgFailed;
      });
      frame.append(picture);
      dialog.append(close, status, frame);
      document.body.append(dialog);
    }
    const source = link.querySelector("img");
    const image = dialog.querySelector("img");
    const status = dialog.querySelector(".page-dialog-status");
    dialog.dataset.msgFailed = link.dataset.msgFailed || "The page could not be drawn.";
    status.textContent = link.dataset.msgLoading || "Drawing the page…";
    dialog.classList.add("loading");
    image.src = link.href;
    if (image.complete && image.naturalWidth > 0) dialog.classList.remove("loading");
    image.alt = source ? source.alt : "";
    dialog.setAttribute("aria-label", image.alt);
    dialog.querySelector("button").textContent = link.dataset.msgClose || "Close";
    dialog.showModal();
  });

  // Uploads: each chosen or dropped file goes up in its own request (XMLHttpRequest,
  // which reports upload progress where fetch does not) with a progress bar; each
  // response is the sources list (and notes), swapped in by htmx as its own upload would.
  function uploadOne(form, file) {
    const list = document.getElementById("upload-progress");
    const item = document.createElement("li");
    const label = document.createElement("span");
    label.className = "upload-name";
    label.textContent = file.name;
    const bar = document.createElement("progress");
    bar.max = file.size || 1;
    bar.value = 0;
    bar.setAttribute("aria-label", (form.dataset.msgUploading || "Uploading") + " " + file.name);
    item.append(label, bar);
    list.append(item);

    const body = new FormData();
    body.append("csrfmiddlewaretoken", form.querySelector("[name=csrfmiddlewaretoken]").value);
    const capture = form.querySelector("[name=pdf_capture]");
    if (capture) body.append("pdf_capture", capture.value);
    if (form.dataset.directUrl) {
      directUpload(form, file, body, item, bar);
      return;
    }
    body.append("files", file, file.name);

    const xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.setRequestHeader("HX-Request", "true");
    xhr.upload.addEventListener("progress", function (event) {
      if (event.lengthComputable) { bar.max = event.total; bar.value = event.loaded; }
    });
    function fail(text) {
      item.className = "upload-failed";
      bar.remove();
      const error = document.createElement("span");
      error.className = "source-error";
      error.setAttribute("role", "alert");
      error.textContent = text;
      item.append(error);
    }
    xhr.addEventListener("load", function () {
      if (xhr.status === 402) {
        document.getElementById("credit-notice").innerHTML = xhr.responseText;
        fail(form.dataset.msgRefused || "The upload was refused");
      } else if (xhr.status === 429 || xhr.status === 413 || xhr.status === 503) {
        fail(noticeText(xhr.responseText));  // the limit's or the outage's reason, beside the file
      } else if (xhr.status >= 200 && xhr.status < 300) {
        item.remove();
        htmx.swap("#sources", keepOpen(xhr.responseText), { swapStyle: "outerHTML" });
        updateChatHint();
      } else {
        fail((form.dataset.msgRefused || "The upload was refused") + " (HTTP " + xhr.status + ").");
      }
    });
    xhr.addEventListener("error", function () {
      fail(form.dataset.msgFailed || "The upload failed.");
    });
    xhr.send(body);
  }

  function failed(item, bar, text) {
    item.className = "upload-failed";
    bar.remove();
    const error = document.createElement("span");
    error.className = "source-error";
    error.setAttribute("role", "alert");
    error.textContent = text;
    item.append(error);
  }

  // The file's SHA-256 as hex, or "" where the browser has no Web Crypto (plain http): the
  // server hashes what arrives either way; an announced hash must match it.
  async function sha256(file) {
    if (!window.crypto || !crypto.subtle) return "";
    const digest = await crypto.subtle.digest("SHA-256", await file.arrayBuffer());
    return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // With S3 (ingest/direct_uploads.py): reserve the file, put it straight into the bucket
  // with the signed URL (the bytes never pass through Loupe), then confirm; the sources list
  // is fetched again once the source is queued.
  async function directUpload(form, file, body, item, bar) {
    const refused = form.dataset.msgRefused || "The upload was refused";
    try {
      body.append("filename", file.name);
      body.append("size", String(file.size));
      body.append("content_type", file.type || "application/octet-stream");
      body.append("sha256", await sha256(file));
      const reserved = await fetch(form.dataset.directUrl, {
        method: "POST", body: body, headers: { "HX-Request": "true" },
      });
      if (reserved.status === 402) {
        document.getElementById("credit-notice").innerHTML = await reserved.text();
        return failed(item, bar, refused);
      }
      if (reserved.status === 429 || reserved.status === 503) {
        return failed(item, bar, noticeText(await reserved.text()));
      }
      const place = await reserved.json();
      if (!reserved.ok) return failed(item, bar, place.error || refused);
      const status = await new Promise(function (resolve) {
        const xhr = new XMLHttpRequest();
        xhr.open("PUT", place.url);
        for (const [name, value] of Object.entries(place.headers)) xhr.setRequestHeader(name, value);
        xhr.upload.addEventListener("progress", function (event) {
          if (event.lengthComputable) { bar.max = event.total; bar.value = event.loaded; }
        });
        xhr.addEventListener("load", function () { resolve(xhr.status); });
        xhr.addEventListener("error", function () { resolve(0); });
        xhr.send(file);
      });
      if (status < 200 || status >= 300) {
        return failed(item, bar, form.dataset.msgFailed || "The upload failed.");
      }
      const confirmBody = new FormData();
      confirmBody.append("csrfmiddlewaretoken", body.get("csrfmiddlewaretoken"));
      const confirmed = await fetch(place.confirm_url, {
        method: "POST", body: confirmBody, headers: { "HX-Request": "true" },
      });
      const result = await confirmed.json();
      if (!confirmed.ok) return failed(item, bar, result.error || refused);
      item.remove();
      htmx.ajax("GET", form.dataset.sourcesUrl, { target: "#sources", swap: "outerHTML" });
    } catch (exc) {
      failed(item, bar, form.dataset.msgFailed || "The upload failed.");
    }
  }

  function uploadAll(form, files) {
    for (const file of files) uploadOne(form, file);
    form.reset();
  }

  document.addEventListener("submit", function (event) {
    const form = event.target.closest("form[data-upload]");
    if (!form || !window.FormData) return; // the plain POST
    const input = form.querySelector("input[type=file]");
    event.preventDefault();
    event.stopPropagation(); // not htmx's post too
    if (input.files.length) uploadAll(form, Array.from(input.files));
  }, true);

  // Choosing files starts their upload at once; the Upload button stays for no-JS.
  document.addEventListener("change", function (event) {
    const input = event.target;
    if (input.matches("form[data-upload] input[type=file]") && input.files.length) {
      uploadAll(input.form, Array.from(input.files));
    }
  });

  function dropzone(event) {
    return event.target.closest && event.target.closest(".dropzone");
  }
  document.addEventListener("dragover", function (event) {
    const zone = dropzone(event);
    if (!zone) return;
    event.preventDefault();
    zone.classList.add("dragging");
  });
  document.addEventListener("dragleave", function (event) {
    const zone = dropzone(event);
    if (zone) zone.classList.remove("dragging");
  });
  document.addEventListener("drop", function (event) {
    const zone = dropzone(event);
    if (!zone) return;
    event.preventDefault();
    zone.classList.remove("dragging");
    const files = Array.from(event.dataTransfer.files || []);
    if (files.length) uploadAll(zone.closest("form"), files);
  });
})();

// A slide deck shown one slide at a time: the arrow keys (and Page Up/Down, Home, End) move
// through it while the focus is in it, "Present" fills the window and Escape leaves. Without
// JavaScript every slide is shown, one below the other.
(function () {
  "use strict";

  function show(deck, index) {
    const slides = deck.querySelectorAll("[data-slide]");
    const current = Math.max(0, Math.min(slides.length - 1, index));
    slides.forEach(function (slide, at) { slide.hidden = at !== current; });
    deck.dataset.current = String(current);
    const position = deck.querySelector(".deck-position");
    if (position) position.textContent = (current + 1) + " / " + slides.length;
    deck.querySelectorAll("[data-deck-step]").forEach(function (button) {
      const step = Number(button.dataset.deckStep);
      button.disabled = current + step < 0 || current + step >= slides.length;
    });
  }

  function step(deck, by) { show(deck, Number(deck.dataset.current || 0) + by); }

  function leave(deck) {
    deck.classList.remove("deck-presenting");
    deck.focus();
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-deck]").forEach(function (deck) {
      const slides = Array.from(deck.querySelectorAll("[data-slide]"));
      const asked = slides.findIndex(function (slide) { return "#" + slide.id === location.hash; });
      deck.classList.add("deck-js");
      deck.querySelector(".deck-nav").hidden = false;
      show(deck, Math.max(asked, 0));
    });
  });

  document.addEventListener("click", function (event) {
    const deck = event.target.closest("[data-deck]");
    if (!deck) return;
    const stepper = event.target.closest("[data-deck-step]");
    if (stepper) step(deck, Number(stepper.dataset.deckStep));
    if (event.target.closest("[data-deck-present]")) {
      deck.classList.add("deck-presenting");
      deck.focus();
    }
  });

  document.addEventListener("keydown", function (event) {
    const deck = event.target.closest && event.target.closest("[data-deck]");
    if (!deck || event.target.matches("input, textarea, select")) return;
    const moves = { ArrowRight: 1, ArrowDown: 1, PageDown: 1, " ": 1, ArrowLeft: -1, ArrowUp: -1, PageUp: -1 };
    if (event.key in moves) {
      event.preventDefault();
      step(deck, moves[event.key]);
    } else if (event.key === "Home" || event.key === "End") {
      event.preventDefault();
      show(deck, event.key === "Home" ? 0 : deck.querySelectorAll("[data-slide]").length - 1);
    } else if (event.key === "Escape") {
      leave(deck);
    }
  });
})();
