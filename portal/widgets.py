"""The form renderer (settings.FORM_RENDERER). Django draws every widget, and every
option of a select, through a template of its own: the lab's prediction form is 120 of
them (twelve selects and their 108 options), which took a third of the time of a
trainee's first look at an exercise, the page a class opens all at once. The few
widget templates the portal's forms use are written here in Python, to the same
markup (tests/portal/test_widgets.py holds them to Django's); any other template is
drawn Django's way."""

from collections.abc import Callable

from django.forms.renderers import DjangoTemplates
from django.utils.html import conditional_escape, escape

WIDGETS = "django/forms/widgets/"


def _attrs(attrs: dict) -> str:
    """attrs.html: ` name="value"`, a bare ` name` for True, nothing for False."""
    return "".join(
        f" {conditional_escape(name)}"
        if value is True
        else f' {conditional_escape(name)}="{escape(value)}"'
        for name, value in attrs.items()
        if value is not False
    )


def _input(widget: dict) -> str:
    value = "" if widget["value"] is None else f' value="{escape(widget["value"])}"'
    kind, name = conditional_escape(widget["type"]), conditional_escape(widget["name"])
    return f'<input type="{kind}" name="{name}"{value}{_attrs(widget["attrs"])}>'


def _input_option(widget: dict) -> str:
    """A checkbox or radio button of a multiple choice, in its label if asked."""
    if not widget.get("wrap_label"):
        return _input(widget)
    label_id = widget["attrs"].get("id")
    for_id = f' for="{conditional_escape(label_id)}"' if label_id else ""
    # Django's input.html ends in a newline, which its include keeps.
    return f"<label{for_id}>{_input(widget)}\n {conditional_escape(widget['label'])}</label>"


def _option(widget: dict) -> str:
    value, label = escape(widget["value"]), conditional_escape(widget["label"])
    return f'<option value="{value}"{_attrs(widget["attrs"])}>{label}</option>'


def _select(widget: dict) -> str:
    parts = [f'<select name="{conditional_escape(widget["name"])}"{_attrs(widget["attrs"])}>']
    for group_name, options, _ in widget["optgroups"]:
        if group_name:
            parts.append(f'\n  <optgroup label="{conditional_escape(group_name)}">')
        parts += [f"\n  {_option(option)}\n" for option in options]  # as its include
        if group_name:
            parts.append("\n  </optgroup>")
    parts.append("\n</select>")
    return "".join(parts)


QUICK: dict[str, Callable[[dict], str]] = {
    **{
        f"{WIDGETS}{kind}.html": _input
        for kind in ("input", "text", "hidden", "number", "email", "password", "url", "checkbox")
    },
    f"{WIDGETS}input_option.html": _input_option,
    f"{WIDGETS}checkbox_option.html": _input_option,
    f"{WIDGETS}radio_option.html": _input_option,
    f"{WIDGETS}select.html": _select,
    f"{WIDGETS}select_option.html": _option,
}


class QuickRenderer(DjangoTemplates):
    """Django's renderer, but for the widgets of QUICK, drawn without a template."""

    def render(self, template_name: str, context: dict, request=None) -> str:
        if (draw := QUICK.get(template_name)) is not None:
            return draw(context["widget"])
        return super().render(template_name, context, request=request)
