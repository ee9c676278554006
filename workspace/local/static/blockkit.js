// Block Kit as Slack draws it: section (text, fields, accessory), header, context, divider,
// actions (buttons with primary/danger styles and confirm dialogs, static selects), image,
// rich_text, and, in modals, input blocks (plain_text_input, static_select). Texts go through
// Mrkdwn, which escapes them; URLs are kept to http(s) and this workspace's own files.
"use strict";

(function () {
  const M = window.Mrkdwn;

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "html") node.innerHTML = value;
      else if (key === "text") node.textContent = value;
      else if (key === "className") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of [].concat(children || [])) {
      if (child) node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  // An image's address: http(s), or a file of this workspace (never javascript: or data:).
  function imageUrl(block) {
    const file = block.slack_file || {};
    if (file.id) return "/local/files/" + encodeURIComponent(file.id) + "/image";
    const url = file.url || block.image_url || "";
    const local = /\/files-pri\/[^/]*-([A-Z0-9]+)\/(?:download\/)?([^/?#]+)/.exec(url);
    if (local) return "/local/files/" + local[1] + "/" + local[2];
    return M.safeUrl(url) || "";
  }

  function image(block, className) {
    const src = imageUrl(block);
    return src ? el("img", { className, src, alt: block.alt_text || "", loading: "lazy" }) : null;
  }

  // Slack's confirm dialog: resolves true when the person confirms.
  function confirmDialog(confirm, ctx) {
    return new Promise((resolve) => {
      const root = document.getElementById("confirm-root");
      const done = (answer) => { root.replaceChildren(); resolve(answer); };
      const style = confirm.style === "danger" ? "danger" : "primary";
      const box = el("div", { className: "dialog bk-confirm", role: "alertdialog", "aria-modal": "true" }, [
        el("h2", { className: "dialog-title", html: M.textObject(confirm.title, ctx) }),
        el("div", { className: "dialog-body", html: M.textObject(confirm.text, ctx) }),
        el("div", { className: "dialog-buttons" }, [
          el("button", { type: "button", className: "bk-button deny", onclick: () => done(false),
            html: M.textObject(confirm.deny || { type: "plain_text", text: "Cancel" }, ctx) }),
          el("button", { type: "button", className: "bk-button confirm " + style,
            onclick: () => done(true),
            html: M.textObject(confirm.confirm || { type: "plain_text", text: "Yes" }, ctx) }),
        ]),
      ]);
      root.replaceChildren(el("div", { className: "overlay" }, [box]));
      box.querySelector("button.confirm").focus();
    });
  }

  function optionsOf(element) {
    const groups = element.option_groups || [{ options: element.options || [] }];
    return groups;
  }

  function select(element, block, ctx, inModal) {
    const node = el("select", {
      className: "bk-select",
      "data-action-id": element.action_id,
      "data-block-id": block.block_id,
      "aria-label": element.placeholder ? element.placeholder.text : "Choose",
    });
    const initial = element.initial_option ? element.initial_option.value : null;
    node.appendChild(el("option", { value: "", disabled: true, selected: initial === null,
      text: element.placeholder ? element.placeholder.text : "Select an item" }));
    const byValue = {};
    for (const group of optionsOf(element)) {
      const parent = group.label ? el("optgroup", { label: group.label.text }) : node;
      for (const option of group.options || []) {
        byValue[option.value] = option;
        parent.appendChild(el("option", { value: option.value, text: option.text.text,
          selected: option.value === initial }));
      }
      if (parent !== node) node.appendChild(parent);
    }
    node.optionFor = (value) => byValue[value] || null;
    if (!inModal) {
      node.addEventListener("change", () => {
        const option = byValue[node.value];
        if (option) ctx.onAction({ type: "static_select", action_id: element.action_id,
          block_id: block.block_id, selected_option: option });
      });
    }
    return node;
  }

  function button(element, block, ctx) {
    const style = element.style === "primary" || element.style === "danger" ? element.style : "";
    const node = el("button", { type: "button", className: ("bk-button " + style).trim(),
      "data-action-id": element.action_id, html: M.textObject(element.text, ctx) });
    node.addEventListener("click", async () => {
      if (element.confirm && !(await confirmDialog(element.confirm, ctx))) return;
      const url = element.url && M.safeUrl(element.url);
      if (url) window.open(url, "_blank", "noopener");
      ctx.onAction({ type: "button", action_id: element.action_id, block_id: block.block_id,
        value: element.value, text: element.text, style: element.style });
    });
    return node;
  }

  function element(item, block, ctx, inModal) {
    if (!item) return null;
    if (item.type === "button") return button(item, block, ctx);
    if (item.type === "static_select") return select(item, block, ctx, inModal);
    if (item.type === "image") return image(item, "bk-accessory-image");
    return el("span", { className: "bk-unsupported", text: "[" + item.type + "]" });
  }

  function richText(node, ctx) {
    const parts = [];
    for (const item of node.elements || []) {
      if (item.type === "text") {
        let html = M.plain(item.text, true);
        const style = item.style || {};
        if (style.code) html = "<code>" + html + "</code>";
        if (style.bold) html = "<b>" + html + "</b>";
        if (style.italic) html = "<i>" + html + "</i>";
        if (style.strike) html = "<s>" + html + "</s>";
        parts.push(html);
      } else if (item.type === "link") {
        const url = M.safeUrl(item.url || "");
        parts.push(url ? M.render("<" + url + "|" + (item.text || url) + ">") : M.plain(item.text || ""));
      } else if (item.type === "user") {
        parts.push(M.render("<@" + item.user_id + ">", ctx));
      } else if (item.type === "emoji") {
        parts.push(M.plain(":" + item.name + ":", true));
      } else if (item.elements) {
        const inner = richText(item, ctx);
        if (item.type === "rich_text_list") {
          parts.push("<ul>" + (item.elements || []).map((li) => "<li>" + richText(li, ctx) + "</li>").join("") + "</ul>");
        } else if (item.type === "rich_text_preformatted") {
          parts.push("<pre>" + inner + "</pre>");
        } else if (item.type === "rich_text_quote") {
          parts.push("<blockquote>" + inner + "</blockquote>");
        } else {
          parts.push("<div>" + inner + "</div>");
        }
      }
    }
    return parts.join("");
  }

  function input(block, ctx) {
    const item = block.element || {};
    let control;
    if (item.type === "plain_text_input") {
      const attrs = { className: "bk-input", "data-action-id": item.action_id,
        "data-block-id": block.block_id, placeholder: item.placeholder ? item.placeholder.text : "",
        maxlength: item.max_length, "aria-label": block.label ? block.label.text : "" };
      control = item.multiline ? el("textarea", { ...attrs, rows: 3 }) : el("input", { ...attrs, type: "text" });
      control.value = item.initial_value || "";
    } else if (item.type === "static_select") {
      control = select(item, block, ctx, true);
    } else {
      control = element(item, block, ctx, true);
    }
    return el("div", { className: "bk-input-block", "data-block-id": block.block_id }, [
      el("label", { className: "bk-label" }, [
        el("span", { html: M.textObject(block.label, ctx) }),
        block.optional ? el("span", { className: "optional", text: " (optional)" }) : null,
      ]),
      control,
      block.hint ? el("div", { className: "bk-hint", html: M.textObject(block.hint, ctx) }) : null,
      el("div", { className: "bk-error", role: "alert" }),
    ]);
  }

  function block(item, ctx, inModal) {
    const type = item.type;
    const attrs = { className: "bk-block bk-" + type, "data-block-id": item.block_id };
    if (type === "section") {
      const fields = item.fields && item.fields.length
        ? el("div", { className: "bk-fields" },
          item.fields.map((f) => el("div", { className: "bk-field", html: M.textObject(f, ctx) })))
        : null;
      return el("div", attrs, [
        el("div", { className: "bk-section-main" }, [
          item.text ? el("div", { className: "bk-text", html: M.textObject(item.text, ctx) }) : null,
          fields,
        ]),
        item.accessory ? el("div", { className: "bk-accessory" }, [element(item.accessory, item, ctx, inModal)]) : null,
      ]);
    }
    if (type === "header") return el("div", { ...attrs, html: M.textObject(item.text, ctx) });
    if (type === "divider") return el("hr", attrs);
    if (type === "context") {
      return el("div", attrs, (item.elements || []).map((part) => part.type === "image"
        ? image(part, "bk-context-image")
        : el("span", { className: "bk-context-text", html: M.textObject(part, ctx) })));
    }
    if (type === "actions") {
      return el("div", attrs, (item.elements || []).map((part) => element(part, item, ctx, inModal)));
    }
    if (type === "image") {
      return el("figure", attrs, [
        item.title ? el("figcaption", { html: M.textObject(item.title, ctx) }) : null,
        image(item, "bk-image"),
      ]);
    }
    if (type === "rich_text") return el("div", { ...attrs, html: richText(item, ctx) });
    if (type === "input") return input(item, ctx);
    return el("div", { ...attrs, className: "bk-unsupported", text: "[unsupported block: " + type + "]" });
  }

  // A list of blocks as one element; ctx = {names, onAction(action)}.
  function render(blocks, ctx, inModal) {
    return el("div", { className: "bk-blocks" }, (blocks || []).map((b) => block(b, ctx, inModal)));
  }

  // The values of a modal's inputs, as Slack sends them in view.state.values.
  function values(root) {
    const found = {};
    for (const control of root.querySelectorAll("[data-action-id][data-block-id]")) {
      if (!control.closest(".bk-input-block")) continue;
      const blockId = control.dataset.blockId;
      const actionId = control.dataset.actionId;
      found[blockId] = found[blockId] || {};
      if (control.tagName === "SELECT") {
        found[blockId][actionId] = { type: "static_select",
          selected_option: control.value ? control.optionFor(control.value) : null };
      } else {
        found[blockId][actionId] = { type: "plain_text_input", value: control.value === "" ? null : control.value };
      }
    }
    return found;
  }

  window.BlockKit = { render, values, el, confirmDialog, imageUrl };
})();
