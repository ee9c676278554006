// Slack's mrkdwn as HTML, the way Slack shows it: *bold*, _italic_, ~strike~, `code`,
// ```preformatted```, <@U…> mentions as names, <!subteam^S…> groups, <#C…|name> channels,
// <url|text> links (http, https and mailto only), &amp; &lt; &gt; entities, :emoji: codes,
// and line breaks. Every text is HTML-escaped before any tag of ours is added around it.
"use strict";

(function () {
  const EMOJI = {
    arrows_counterclockwise: "🔄", warning: "⚠️", hourglass: "⌛", x: "❌",
    white_check_mark: "✅", pencil2: "✏️", mag: "🔍", inbox_tray: "📥",
    hourglass_flowing_sand: "⏳", question: "❓", no_entry: "⛔", information_source: "ℹ️",
    heavy_check_mark: "✔️", bar_chart: "📊", chart_with_upwards_trend: "📈", memo: "📝",
    page_facing_up: "📄", lock: "🔒", bulb: "💡", eyes: "👀", tada: "🎉", rotating_light: "🚨",
    thumbsup: "👍", "+1": "👍", thumbsdown: "👎", robot_face: "🤖", mag_right: "🔎",
    large_green_circle: "🟢", red_circle: "🔴", large_yellow_circle: "🟡", clipboard: "📋",
  };
  const OPEN = "\uE000";
  const CLOSE = "\uE001";

  function escapeHtml(text) {
    return String(text)
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&#39;");
  }

  // Slack's three entities back to characters (the text is escaped again before it is shown).
  function decodeEntities(text) {
    return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  }

  function emoji(escaped) {
    return escaped.replace(/:([a-z0-9_+-]+):/g, (all, name) =>
      Object.prototype.hasOwnProperty.call(EMOJI, name) ? EMOJI[name] : all);
  }

  function safeUrl(url) {
    return /^(https?:\/\/|mailto:)/i.test(url) ? url : null;
  }

  function link(url, label) {
    return '<a href="' + escapeHtml(url) + '" target="_blank" rel="noopener noreferrer">' +
      escapeHtml(label) + "</a>";
  }

  // One <…> token of mrkdwn as HTML.
  function token(inner, ctx) {
    const bar = inner.indexOf("|");
    const target = bar >= 0 ? inner.slice(0, bar) : inner;
    const label = bar >= 0 ? decodeEntities(inner.slice(bar + 1)) : "";
    const names = (ctx && ctx.names) || {};
    if (target.startsWith("@")) {
      const id = target.slice(1);
      const name = names[id] || label || id;
      return '<span class="mention" data-user="' + escapeHtml(id) + '">@' + escapeHtml(name) +
        "</span>";
    }
    if (target.startsWith("!subteam^")) {
      const id = target.slice("!subteam^".length);
      const name = label ? label.replace(/^@/, "") : id;
      return '<span class="mention">@' + escapeHtml(name) + "</span>";
    }
    if (target.startsWith("#")) {
      return '<span class="mention">#' + escapeHtml(label || target.slice(1)) + "</span>";
    }
    if (target.startsWith("!date^")) {
      return escapeHtml(label || target);
    }
    if (target.startsWith("!")) {
      return '<span class="mention">@' + escapeHtml(target.slice(1)) + "</span>";
    }
    const url = safeUrl(decodeEntities(target));
    if (url) {
      return link(url, label || url);
    }
    return escapeHtml(decodeEntities(label || target));
  }

  // Bold, italic and strike on escaped text (word boundaries as Slack has them).
  function styles(escaped) {
    return escaped
      .replace(/(^|[^\w*])\*(?=\S)([^\n]*?[^\s*])\*(?![\w*])/g, "$1<b>$2</b>")
      .replace(/(^|[^\w_])_(?=\S)([^\n]*?[^\s_])_(?![\w_])/g, "$1<i>$2</i>")
      .replace(/(^|[^\w~])~(?=\S)([^~\n]*?[^\s~])~(?![\w~])/g, "$1<s>$2</s>");
  }

  // mrkdwn text as HTML (safe to assign to innerHTML).
  function render(text, ctx) {
    const source = String(text == null ? "" : text).replace(/[\uE000\uE001]/g, "");
    const held = [];
    const hold = (html) => OPEN + (held.push(html) - 1) + CLOSE;
    let work = source.replace(/```([\s\S]*?)```/g, (all, code) =>
      hold("<pre>" + escapeHtml(decodeEntities(code.replace(/^\n/, ""))) + "</pre>"));
    work = work.replace(/`([^`\n]+)`/g, (all, code) =>
      hold("<code>" + escapeHtml(decodeEntities(code)) + "</code>"));
    work = work.replace(/<([^<>\n]+)>/g, (all, inner) => hold(token(inner, ctx)));
    let html = styles(emoji(escapeHtml(decodeEntities(work))));
    html = html.replace(/\n/g, "<br>");
    const pattern = new RegExp(OPEN + "(\\d+)" + CLOSE, "g");
    return html.replace(pattern, (all, index) => held[Number(index)] || "");
  }

  // plain_text as HTML: escaped, with :emoji: codes when the object asks for them.
  function plain(text, withEmoji) {
    const escaped = escapeHtml(text == null ? "" : text).replace(/\n/g, "<br>");
    return withEmoji === false ? escaped : emoji(escaped);
  }

  // A text object ({type: "mrkdwn"|"plain_text", text}) as HTML.
  function textObject(object, ctx) {
    if (!object) {
      return "";
    }
    if (typeof object === "string") {
      return plain(object, true);
    }
    if (object.type === "mrkdwn") {
      return render(object.text, ctx);
    }
    return plain(object.text, object.emoji);
  }

  window.Mrkdwn = { render, plain, textObject, escapeHtml, safeUrl };
})();
