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
    askButton.disabled = true;
    stopButton.hidden = false;
    stopButton.onclick = function () { controller.abort(); };
    status.textContent = "Searching your sources and writing an answer…";

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
        error = "Your credit is spent.";
      } else if (!response.ok) {
        error = "Loupe could not answer (HTTP " + response.status + ").";
      } else {
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) break;
          let events;
          [events, buffer] = takeEvents(buffer + chunk.value);
          for (const event of events) {
            if (event.name === "delta") text.textContent += event.data.text;
            else if (event.name === "done") done = event.data;
            else if (event.name === "error") error = event.data.error;
          }
        }
      }
    } catch (exc) {
      if (exc.name === "AbortError") stopped = true;
      else error = "The connection to Loupe was lost before the answer was complete.";
    } finally {
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
      note.textContent = "Stopped. This answer was not saved.";
      answer.append(note);
      return;
    }
    echo.remove();
    answer.className = "message message-error";
    answer.setAttribute("role", "alert");
    text.textContent = error || "The answer ended without being stored.";
  }

  document.addEventListener("submit", function (event) {
    const form = event.target.closest("form[data-stream-url]");
    if (!form || !window.fetch || !window.TextDecoderStream) return; // the plain POST
    event.preventDefault();
    ask(form);
  });
})();
