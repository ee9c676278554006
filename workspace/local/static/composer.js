// The files of a composer, the channel's or the open thread's, as Slack's composers take them:
// chosen with its file input or dropped onto its pane, listed with a button to remove each
// until they are sent, then uploaded as drafts (POST /local/upload) that one message shares.
"use strict";

(function () {
  const { el } = window.BlockKit;

  function size(bytes) {
    if (bytes < 1024) return bytes + " B";
    if (bytes < 1 << 20) return (bytes / 1024).toFixed(0) + " kB";
    return (bytes / (1 << 20)).toFixed(1) + " MB";
  }

  async function upload(file) {
    const answer = await fetch("/local/upload?name=" + encodeURIComponent(file.name), {
      method: "POST", headers: { "X-Reconbot-Local": "1" }, body: file,
    });
    const found = await answer.json().catch(() => ({ error: "The upload failed." }));
    if (!answer.ok) throw new Error(found.error || "The upload failed.");
    return found.draft;
  }

  // Upload `files` in order; their draft ids, for POST /local/share.
  async function drafts(files) {
    const found = [];
    for (const file of files) found.push(await upload(file));
    return found;
  }

  // Whether a drag carries files (not text or a link dragged within the page).
  function carriesFiles(event) {
    return Array.from((event.dataTransfer && event.dataTransfer.types) || []).includes("Files");
  }

  // The pending files of one composer: `input` (a file input) and drops onto `zone` add to
  // them, `list` shows them. A drop is the zone's alone: it goes no further up the page.
  function attach({ input, zone, list }) {
    const pending = [];
    const draw = () => list.replaceChildren(...pending.map((file, index) =>
      el("span", { className: "pending-file" }, [
        el("span", { text: file.name + " · " + size(file.size) }),
        el("button", { type: "button", "aria-label": "Remove " + file.name, text: "×",
          onclick: () => { pending.splice(index, 1); draw(); } }),
      ])));
    const add = (files) => { for (const file of files) pending.push(file); draw(); };
    input.addEventListener("change", () => { add(input.files); input.value = ""; });
    zone.addEventListener("dragover", (event) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      event.stopPropagation();
      event.dataTransfer.dropEffect = "copy";
      zone.classList.add("dragging");
    });
    zone.addEventListener("dragleave", (event) => {
      if (!zone.contains(event.relatedTarget)) zone.classList.remove("dragging");
    });
    zone.addEventListener("drop", (event) => {
      event.preventDefault();
      event.stopPropagation();
      zone.classList.remove("dragging");
      add(event.dataTransfer.files);
    });
    return {
      files: () => pending.slice(),
      // Take `sent` off the list (files added while they were uploading stay).
      sent: (sent) => {
        for (const file of sent) {
          const at = pending.indexOf(file);
          if (at >= 0) pending.splice(at, 1);
        }
        draw();
      },
      clear: () => { pending.length = 0; draw(); },
    };
  }

  // A file dropped outside every composer is refused, rather than opened by the browser in
  // place of the page.
  function guard(root) {
    for (const type of ["dragover", "drop"]) {
      root.addEventListener(type, (event) => {
        if (!carriesFiles(event)) return;
        event.preventDefault();
        event.dataTransfer.dropEffect = "none";
      });
    }
  }

  window.Composer = { attach, drafts, guard, size };
})();
