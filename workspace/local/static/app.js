// The local workspace's page: a channel, the open thread, and the modals of the person you act
// as. It polls the workspace for what that person sees and sends what they do to its small
// JSON endpoints, which deliver it to reconbot as Slack would (signed, to /slack/events).
"use strict";

(function () {
  const { el, render: renderBlocks, values: viewValues } = window.BlockKit;
  const M = window.Mrkdwn;
  const { size } = window.Composer;
  const POLL_MS = 500;

  const page = {
    me: new URLSearchParams(location.search).get("as") || sessionStorage.getItem("reconbot-as") || "",
    version: "",
    data: null,
    thread: null,
    opened: false,
    dismissed: new Set(),
    modalKey: "",
    composers: { channel: null, thread: null },
    polling: false,
    caches: { channel: new Map(), thread: new Map() },
  };
  const $ = (id) => document.getElementById(id);

  // -- talking to the workspace -----------------------------------------------------------

  async function post(path, body) {
    const answer = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Reconbot-Local": "1" },
      body: JSON.stringify({ user: page.me, ...body }),
    });
    const found = await answer.json().catch(() => ({ ok: false, error: "No answer." }));
    if (!answer.ok || found.ok === false) throw new Error(found.error || "Something went wrong.");
    setTimeout(poll, 50);
    return found;
  }

  async function poll() {
    if (page.polling || !page.me) return;
    page.polling = true;
    const me = page.me;
    try {
      const query = "user=" + encodeURIComponent(me) + "&since=" + encodeURIComponent(page.version);
      const answer = await fetch("/local/state?" + query, { cache: "no-store" });
      const found = await answer.json();
      if (me === page.me && answer.ok && !found.unchanged) {
        page.data = found;
        page.version = found.version;
        draw();
      }
    } catch (error) {
      // The workspace is restarting or stopped; the next poll tries again.
    } finally {
      page.polling = false;
    }
  }

  function toast(text) {
    const node = $("toast");
    node.textContent = text;
    node.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { node.hidden = true; }, 6000);
  }

  async function attempt(action) {
    try {
      return await action();
    } catch (error) {
      toast("⚠️ " + error.message);
      return null;
    }
  }

  // -- drawing ----------------------------------------------------------------------------

  function tsKey(ts) {
    const [seconds, fraction] = String(ts || "0").split(".");
    return [Number(seconds), Number(fraction || 0)];
  }

  function byTs(a, b) {
    const [x, y] = [tsKey(a.ts), tsKey(b.ts)];
    return x[0] - y[0] || x[1] - y[1];
  }

  function nameOf(user) {
    return (page.data && page.data.names[user]) || user;
  }

  function avatar(user, bot) {
    let hue = 0;
    for (const c of String(user)) hue = (hue * 31 + c.charCodeAt(0)) % 360;
    const node = el("div", { className: "avatar" + (bot ? " bot" : ""),
      text: bot ? "R" : nameOf(user).slice(0, 1).toUpperCase(), "aria-hidden": "true" });
    if (!bot) node.style.background = "hsl(" + hue + ",45%,45%)";
    return node;
  }

  function time(ts) {
    const when = new Date(tsKey(ts)[0] * 1000);
    return el("time", { className: "time", text: when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) });
  }

  function fileNode(file) {
    if (file.image) {
      return el("div", { className: "file file-picture", "data-file-id": file.id }, [
        el("div", { className: "file-caption", text: file.title }),
        el("a", { href: file.url, target: "_blank", rel: "noopener", title: "Open full size" }, [
          el("img", { className: "file-image", src: file.url, alt: file.title }),
        ]),
      ]);
    }
    const kind = (file.name.split(".").pop() || "file").toUpperCase().slice(0, 4);
    return el("div", { className: "file file-card", "data-file-id": file.id }, [
      el("span", { className: "file-icon", text: kind }),
      el("div", { className: "file-about" }, [
        el("div", { className: "file-name", text: file.name }),
        el("div", { className: "file-meta", text: (file.title !== file.name ? file.title + " · " : "") + size(file.size) }),
      ]),
      el("a", { className: "file-download", href: file.url, download: file.name, text: "Download" }),
    ]);
  }

  function messageNode(message, options) {
    const ctx = { names: page.data.names, onAction: (action) => act(message, action) };
    const body = message.blocks && message.blocks.length
      ? renderBlocks(message.blocks, ctx, false)
      : el("div", { className: "text", html: M.render(message.text, ctx) });
    const replies = options.replies
      ? el("button", { type: "button", className: "replies", onclick: () => openThread(message.ts),
        text: options.replies + (options.replies === 1 ? " reply" : " replies") })
      : null;
    return el("div", {
      className: "message" + (message.ephemeral ? " ephemeral" : ""),
      "data-ts": message.ts, "data-user": message.user,
    }, [
      avatar(message.user, message.bot),
      el("div", { className: "message-main" }, [
        el("div", { className: "meta" }, [
          el("span", { className: "author", text: message.bot ? "reconbot" : nameOf(message.user) }),
          message.bot ? el("span", { className: "app-badge", text: "APP" }) : null,
          time(message.ts),
          message.edited ? el("span", { className: "edited", text: "(edited)" }) : null,
        ]),
        message.ephemeral ? el("div", { className: "only-you", text: "👁 Only visible to you" }) : null,
        el("div", { className: "content" }, [body]),
        message.files && message.files.length ? el("div", { className: "files" }, message.files.map(fileNode)) : null,
        message.reactions && message.reactions.length ? el("div", { className: "reactions" },
          message.reactions.map((name) => el("span", { className: "reaction", html: M.plain(":" + name + ":", true) + " 1" }))) : null,
        replies,
      ]),
    ]);
  }

  // Draw `messages` in `container`, reusing the node of a message that did not change.
  function drawList(container, cache, messages, repliesOf) {
    const nearBottom = container.scrollHeight - container.scrollTop - container.clientHeight < 80;
    const next = new Map();
    const nodes = messages.map((message) => {
      const replies = repliesOf ? repliesOf(message) : 0;
      const key = JSON.stringify([message, replies]);
      const node = cache.get(key) || messageNode(message, { replies });
      next.set(key, node);
      return node;
    });
    cache.clear();
    next.forEach((node, key) => cache.set(key, node));
    container.replaceChildren(...nodes);
    if (nearBottom || page.scrollDown) container.scrollTop = container.scrollHeight;
  }

  function draw() {
    const data = page.data;
    drawSwitcher(data);
    $("channel-name").textContent = data.channel.name;
    $("demo-button").hidden = !data.demo;
    const mine = data.ephemerals.map((e) => ({ ...e, user: data.bot, bot: true, ephemeral: true }));
    const roots = data.messages.filter((m) => !m.thread_ts || m.thread_ts === m.ts);
    const replies = (root) => data.messages.filter((m) => m.thread_ts === root.ts && m.ts !== root.ts).length;
    const channel = roots.concat(mine.filter((e) => !e.thread_ts)).sort(byTs);
    drawList($("channel-messages"), page.caches.channel, channel, (m) => (m.ephemeral ? 0 : replies(m)));
    if (page.thread === null && !page.opened) {
      const latest = roots.filter((m) => replies(m) > 0).pop();
      if (latest) { page.thread = latest.ts; page.scrollDown = true; }
    }
    page.opened = true;
    const root = page.thread && data.messages.find((m) => m.ts === page.thread);
    $("thread-pane").hidden = !root;
    if (root) {
      const thread = data.messages.filter((m) => m.thread_ts === root.ts && m.ts !== root.ts)
        .concat(mine.filter((e) => e.thread_ts === root.ts)).sort(byTs);
      drawList($("thread-messages"), page.caches.thread, [root].concat(thread), null);
    }
    page.scrollDown = false;
    drawModal(data.views.filter((v) => !page.dismissed.has(v.id)).pop() || null);
  }

  function drawSwitcher(data) {
    const switcher = $("user-switcher");
    if (switcher.options.length !== data.people.length) {
      switcher.replaceChildren(...data.people.map((p) =>
        el("option", { value: p.id, text: p.name + " (" + p.role + ")" })));
    }
    switcher.value = page.me;
  }

  function openThread(ts) {
    const unsent = ts !== page.thread ? page.composers.thread.files() : [];
    if (unsent.length) {  // files meant for another thread: said, never dropped silently
      page.composers.thread.clear();
      toast("Not sent, and taken off: " + unsent.map((f) => f.name).join(", ") + " (meant for the thread you left).");
    }
    page.thread = ts;
    page.scrollDown = true;
    if (page.data) draw();
  }

  // -- acting -----------------------------------------------------------------------------

  function act(message, action) {
    const body = message.ephemeral
      ? { ephemeral: message.id, action }
      : { ts: message.ts, blocks: message.blocks, action };
    return attempt(() => post("/local/act", body));
  }

  function drawModal(view) {
    const root = $("modal-root");
    const key = view ? JSON.stringify(view) : "";
    if (key === page.modalKey) return;
    page.modalKey = key;
    if (!view) { root.replaceChildren(); return; }
    const ctx = { names: page.data.names, onAction: () => toast("That element does nothing in this workspace.") };
    const body = el("div", { className: "modal-body" }, [renderBlocks(view.blocks, ctx, true)]);
    const close = () => {
      page.dismissed.add(view.id);
      drawModal(null);
      attempt(() => post("/local/close", { view_id: view.id }));
    };
    const submit = view.submit ? el("button", { type: "submit", className: "bk-button primary modal-submit",
      html: M.textObject(view.submit, ctx) }) : null;
    const form = el("form", { className: "dialog modal", role: "dialog", "aria-modal": "true", "data-view-id": view.id }, [
      el("header", { className: "modal-header" }, [
        el("h2", { className: "dialog-title", html: M.textObject(view.title, ctx) }),
        el("button", { type: "button", className: "modal-x", "aria-label": "Close", text: "×", onclick: close }),
      ]),
      body,
      el("footer", { className: "dialog-buttons" }, [
        el("button", { type: "button", className: "bk-button modal-cancel", onclick: close,
          html: M.textObject(view.close || { type: "plain_text", text: "Cancel" }, ctx) }),
        submit,
      ]),
    ]);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!submit || !checkInputs(view, form)) return;
      submit.disabled = true;
      const answer = await attempt(() => post("/local/submit", { view_id: view.id, values: viewValues(form) }));
      submit.disabled = false;
      if (!answer) return;
      showErrors(form, answer.errors || {});
      if (answer.closed) { page.dismissed.add(view.id); drawModal(null); }
    });
    root.replaceChildren(el("div", { className: "overlay" }, [form]));
  }

  // What Slack's client checks before it submits: required inputs and minimum lengths.
  function checkInputs(view, form) {
    const errors = {};
    const values = viewValues(form);
    for (const block of view.blocks) {
      if (block.type !== "input" || !block.element) continue;
      const entered = (values[block.block_id] || {})[block.element.action_id] || {};
      const text = entered.value || "";
      const empty = entered.type === "static_select" ? !entered.selected_option : !text;
      if (empty && !block.optional) errors[block.block_id] = "Please complete this required field.";
      else if (text && block.element.min_length && text.length < block.element.min_length) {
        errors[block.block_id] = "Please enter at least " + block.element.min_length + " characters.";
      }
    }
    showErrors(form, errors);
    return Object.keys(errors).length === 0;
  }

  function showErrors(form, errors) {
    for (const node of form.querySelectorAll(".bk-input-block")) {
      const error = errors[node.dataset.blockId] || "";
      node.querySelector(".bk-error").textContent = error;
      node.classList.toggle("has-error", Boolean(error));
    }
  }

  // Post what a composer holds: its files with the text (uploaded, then shared in one
  // message, as Slack does), or the text alone; in the thread `thread` when there is one.
  async function deliver(composer, text, thread) {
    const files = composer.files();
    if (!files.length && !text.trim()) return null;
    const where = thread ? { thread_ts: thread } : {};
    const answer = await attempt(async () => files.length
      ? post("/local/share", { drafts: await window.Composer.drafts(files), text, ...where })
      : post("/local/say", { text, ...where }));
    if (answer) composer.sent(files);
    return answer && { ...answer, shared: files.length > 0 };
  }

  async function send(event) {
    event.preventDefault();
    const box = $("composer-text");
    $("composer-send").disabled = true;
    const answer = await deliver(page.composers.channel, box.value, null);
    $("composer-send").disabled = false;
    if (!answer) return;
    box.value = "";
    if (answer.shared && answer.ts) openThread(answer.ts);
  }

  async function reply(event) {
    event.preventDefault();
    const box = $("reply-text");
    if (!page.thread) return;
    $("reply-send").disabled = true;
    const answer = await deliver(page.composers.thread, box.value, page.thread);
    $("reply-send").disabled = false;
    if (answer) { box.value = ""; page.scrollDown = true; }
  }

  function submitOnEnter(form) {
    return (event) => {
      if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); form.requestSubmit(); }
    };
  }

  function setUp() {
    $("user-switcher").addEventListener("change", (event) => {
      page.me = event.target.value;
      sessionStorage.setItem("reconbot-as", page.me);
      page.version = "";
      page.modalKey = "";
      page.caches.channel.clear();
      page.caches.thread.clear();
      poll();
    });
    $("composer").addEventListener("submit", send);
    $("composer-text").addEventListener("keydown", submitOnEnter($("composer")));
    $("reply-form").addEventListener("submit", reply);
    $("reply-text").addEventListener("keydown", submitOnEnter($("reply-form")));
    page.composers.channel = window.Composer.attach(
      { input: $("file-input"), zone: $("channel-pane"), list: $("pending-files") });
    page.composers.thread = window.Composer.attach(
      { input: $("reply-file-input"), zone: $("thread-pane"), list: $("reply-pending") });
    window.Composer.guard(document);
    $("demo-button").addEventListener("click", async () => {
      $("demo-button").disabled = true;
      const answer = await attempt(() => post("/local/demo", {}));
      $("demo-button").disabled = false;
      if (answer) openThread(answer.ts);
    });
    $("thread-close").addEventListener("click", () => {
      page.thread = null;
      page.composers.thread.clear();
      $("thread-pane").hidden = true;
    });
    document.addEventListener("keydown", (event) => {
      if (event.key !== "Escape") return;
      const open = document.querySelector("#confirm-root .deny") || document.querySelector("#modal-root .modal-cancel");
      if (open) open.click();
    });
    fetch("/local/state").then((r) => r.json()).then((found) => {
      if (!found.people) return;
      if (!found.people.some((p) => p.id === page.me)) page.me = found.people[0].id;
      poll();
      setInterval(poll, POLL_MS);
    }).catch(() => toast("⚠️ The local workspace does not answer."));
  }

  document.addEventListener("DOMContentLoaded", setUp);
})();
