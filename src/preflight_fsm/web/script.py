"""The page's one script, served by the server itself at :data:`SCRIPT_PATH` (the
Content-Security-Policy allows ``script-src 'self'`` and nothing inline): it runs the WebAuthn
ceremony the page's ``data-`` attributes describe and posts the browser's response back as JSON.

The answer form itself needs no script; only a passkey does (WebAuthn has no HTML form).
"""

from __future__ import annotations

from typing import Final

__all__ = ["SCRIPT", "SCRIPT_PATH"]

SCRIPT_PATH: Final = "/answer-assets/passkey.js"

SCRIPT: Final = """\
"use strict";
(function () {
  var box = document.getElementById("passkey");
  if (!box) { return; }
  var status = document.getElementById("passkey-status");
  var button = document.getElementById("passkey-button");
  function bytes(text) {
    var b64 = text.replace(/-/g, "+").replace(/_/g, "/");
    var raw = atob(b64 + "===".slice((b64.length + 3) % 4));
    var out = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) { out[i] = raw.charCodeAt(i); }
    return out.buffer;
  }
  function text(buffer) {
    var view = new Uint8Array(buffer), raw = "";
    for (var i = 0; i < view.length; i++) { raw += String.fromCharCode(view[i]); }
    return btoa(raw).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
  }
  function say(message) { status.textContent = message; }
  function ids(list) {
    return (list || []).map(function (c) { return { type: c.type, id: bytes(c.id) }; });
  }
  function run() {
    var options = JSON.parse(box.dataset.options);
    var ceremony = box.dataset.ceremony;
    options.challenge = bytes(options.challenge);
    var request;
    if (ceremony === "create") {
      options.user.id = bytes(options.user.id);
      options.excludeCredentials = ids(options.excludeCredentials);
      request = navigator.credentials.create({ publicKey: options });
    } else {
      options.allowCredentials = ids(options.allowCredentials);
      request = navigator.credentials.get({ publicKey: options });
    }
    button.disabled = true;
    say("Waiting for your passkey...");
    request.then(function (credential) {
      var r = credential.response, response = { clientDataJSON: text(r.clientDataJSON) };
      if (ceremony === "create") {
        response.attestationObject = text(r.attestationObject);
        response.transports = r.getTransports ? r.getTransports() : [];
      } else {
        response.authenticatorData = text(r.authenticatorData);
        response.signature = text(r.signature);
        if (r.userHandle) { response.userHandle = text(r.userHandle); }
      }
      return fetch(box.dataset.action, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          csrf_token: box.dataset.csrf,
          credential: { id: credential.id, rawId: text(credential.rawId), type: credential.type,
                        response: response, clientExtensionResults: {} }
        })
      });
    }).then(function (reply) {
      return reply.json().then(function (body) {
        say(body.message);
        if (reply.ok && body.next) {
          var next = document.createElement("a");
          next.id = "passkey-next";
          next.href = body.next;
          next.textContent = "Go to the next question";
          box.appendChild(next);
          next.focus();
        }
        if (reply.ok && body.entry) {
          var entry = document.createElement("pre");
          entry.id = "passkey-entry";
          entry.textContent = body.entry;
          box.appendChild(entry);
        }
        if (!reply.ok) { button.disabled = false; }
        box.dataset.outcome = reply.ok ? "done" : "refused";
      });
    }).catch(function (error) {
      say("Nothing was recorded: the passkey was not given (" + error.name + "). " +
          "Try again, or close this page.");
      box.dataset.outcome = "refused";
      button.disabled = false;
    });
  }
  button.addEventListener("click", run);
})();
"""
