(() => {
  "use strict";
  // The gateway page's only script (docs/dc-api.md#the-pages-side), allowed by the CSP by its hash.
  // It offers the browser's Digital Credentials API where there is one, and moves the
  // page on once the invite is no longer pending (the <noscript> refresh does that
  // without script) -- never while a wallet call is open.
  const section = document.getElementById("dc-api");
  const button = document.getElementById("dc-api-button");
  const message = document.getElementById("dc-api-message");
  const source = document.getElementById("dc-api-request");
  if (!section || !button || !message || !source) return;
  const request = JSON.parse(source.textContent);
  // A live request lasts 10 minutes; after it, a reload shows the next one.
  const renewAt = Date.now() + Number(button.dataset.renewIn);
  let busy = false;

  const poll = async () => {
    if (busy) return;
    if (Date.now() >= renewAt) return location.reload();
    try {
      const answer = await fetch(button.dataset.status, { cache: "no-store" });
      const progress = answer.ok ? await answer.json() : null;
      if (progress && progress.status !== "pending" && !busy) location.reload();
    } catch (_) {
      // Offline for a moment: the next poll tries again.
    }
  };
  setInterval(poll, 2000);

  if (typeof DigitalCredential === "undefined" || !navigator.credentials) return;
  section.hidden = false;

  const say = (text) => {
    message.textContent = text;
    message.hidden = false;
  };
  const declined =
    "No proof of age was shared. You can try again, or use the app link below.";

  // Why the server refused, in words for the visitor.
  const refusal = (status, body) => {
    const reason = body && typeof body.message === "string" ? body.message : "";
    if (status === 400 && reason) return "Your wallet's answer was not accepted: " + reason + ".";
    if (status === 409) return "This link has expired. Please return to the site and start again.";
    if (status === 404) return "This verification link no longer exists.";
    return "Something went wrong (HTTP " + status + "). Please try again.";
  };

  button.addEventListener("click", async () => {
    if (busy) return;
    busy = true;
    button.disabled = true;
    message.hidden = true;
    let leaving = false;
    try {
      let credential;
      try {
        credential = await navigator.credentials.get({
          digital: request.digital,
          mediation: "required",
        });
      } catch (_) {
        return say(declined);
      }
      if (!credential || typeof credential.protocol !== "string") return say(declined);
      const answer = await fetch(button.dataset.endpoint, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          state: request.state,
          protocol: credential.protocol,
          data: credential.data,
        }),
      });
      const body = await answer.json().catch(() => null);
      if (answer.status === 200 && body && typeof body.redirect_uri === "string") {
        leaving = true;
        return location.assign(body.redirect_uri);
      }
      say(refusal(answer.status, body));
    } catch (_) {
      say("We could not reach the server. Check your connection and try again.");
    } finally {
      if (!leaving) {
        busy = false;
        button.disabled = false;
      }
    }
  });
})();
