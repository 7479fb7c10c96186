// mcp-memory web UI: small conveniences on top of pages that work without JavaScript.
// No framework, no inline script (the CSP allows only this file) and nothing fetched from elsewhere; every request carries the session cookie itself.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // Times in the browser's own time zone (the page says UTC, which stays on hover).
  const pad = (n) => String(n).padStart(2, "0");
  for (const element of document.querySelectorAll("time[datetime]")) {
    const when = new Date(element.getAttribute("datetime"));
    if (Number.isNaN(when.getTime())) continue;
    element.title = element.textContent;
    element.textContent = `${when.getFullYear()}-${pad(when.getMonth() + 1)}-${pad(when.getDate())} ` +
      `${pad(when.getHours())}:${pad(when.getMinutes())}`;
  }

  // Ask before a destructive form is sent.
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }

  // Import: a file dragged onto the box is the form's file (then Import sends it, as a chosen one).
  const zone = document.getElementById("drop-zone");
  const fileInput = document.getElementById("i-file");
  if (zone && fileInput) {
    for (const name of ["dragenter", "dragover"]) {
      zone.addEventListener(name, (event) => {
        event.preventDefault();
        zone.classList.add("dragging");
      });
    }
    zone.addEventListener("dragleave", () => zone.classList.remove("dragging"));
    zone.addEventListener("drop", (event) => {
      event.preventDefault();
      zone.classList.remove("dragging");
      const files = event.dataTransfer && event.dataTransfer.files;
      if (!files || files.length !== 1) return;
      fileInput.files = files;
      document.getElementById("drop-hint").textContent = `Ready to import ${files[0].name}.`;
    });
  }

  // Import: show the upload's progress, then go to the job's page.
  const importForm = document.getElementById("import-form");
  if (importForm && window.XMLHttpRequest && window.FormData) {
    importForm.addEventListener("submit", (event) => {
      event.preventDefault();
      const box = importForm.querySelector(".upload-progress");
      const bar = document.getElementById("upload-progress");
      const button = importForm.querySelector("button[type=submit]");
      box.hidden = false;
      button.disabled = true;
      const request = new XMLHttpRequest();
      request.open("POST", importForm.action);
      request.upload.addEventListener("progress", (e) => {
        if (e.lengthComputable) bar.value = Math.round((100 * e.loaded) / e.total);
      });
      request.addEventListener("load", () => {
        if (request.responseURL && request.responseURL !== importForm.action && request.status < 400) {
          window.location.assign(request.responseURL);  // the job's page (after the 303)
        } else {
          // the server's error page, as a plain POST would show it
          const page = new DOMParser().parseFromString(request.responseText, "text/html");
          document.title = page.title;
          document.body.replaceWith(page.body);
        }
      });
      request.addEventListener("error", () => {
        button.disabled = false;
        box.hidden = true;
        window.alert("The upload failed: is the server still running?");
      });
      request.send(new FormData(importForm));
    });
  }

  // An import job: poll its status until it is done.
  const job = document.getElementById("import-job");
  if (job && job.dataset.state === "running") {
    const bar = document.getElementById("job-progress");
    const text = document.getElementById("job-text");
    const poll = async () => {
      let status;
      try {
        const response = await fetch(job.dataset.statusUrl, { headers: { Accept: "application/json" } });
        status = await response.json();
        if (!response.ok) throw new Error(status.error || response.statusText);
      } catch (error) {
        text.textContent = `Cannot read the import's progress: ${error.message}`;
        return;
      }
      bar.max = Math.max(status.total, 1);
      bar.value = status.total ? status.done : 1;
      if (status.state === "running") {
        text.textContent = `Imported ${status.done} of ${status.total}…`;
        window.setTimeout(poll, 300);
        return;
      }
      job.dataset.state = status.state;
      if (status.state === "done") {
        const r = status.result;
        const where = r.namespace ? ` into namespace ${r.namespace}` : "";
        let line = `Done: imported ${r.imported}${where}, skipped ${r.skipped} (already present)`;
        if (r.chit_chat) {
          line += `; left out ${r.chit_chat} chit-chat turn${r.chit_chat === 1 ? "" : "s"} (greetings, thanks, one-word replies)`;
        }
        if (r.vectors_reused) line += `; reused ${r.vectors_reused} stored vectors`;
        if (r.repaired) line += `; repaired ${r.repaired} broken characters`;
        if (r.refused && r.refused.length) {
          line += `; refused ${r.refused.length}: ` + r.refused.map((x) => `${x.where}: ${x.reason}`).join(" ");
          text.textContent = line;
        } else {
          text.textContent = `${line}.`;
        }
        if (r.redacted && r.redacted.length) {
          text.textContent += ` Redacted secrets in ${r.redacted.length}: ` +
            r.redacted.map((x) => `${x.where}: ${x.what}`).join("; ") + ".";
        }
      } else {
        text.textContent = `Failed: ${status.error}`;
      }
    };
    poll();
  }

  // "/" jumps to the search box, as on many sites (not while typing in a field).
  document.addEventListener("keydown", (event) => {
    if (event.key !== "/" || event.target.closest("input, textarea, select")) return;
    const box = document.getElementById("q");
    if (box) { event.preventDefault(); box.focus(); }
  });
});
