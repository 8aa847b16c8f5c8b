"""Editors built from a pydantic settings section: one widget per field, bounds taken from the field."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QLineEdit, QSpinBox, QWidget

_EDITABLE = (bool, int, float, str)


def _bounds(info: FieldInfo) -> tuple[float | None, float | None]:
    low = high = None
    for meta in info.metadata:
        if isinstance(meta, annotated_types.Ge | annotated_types.Gt):
            low = meta.ge if isinstance(meta, annotated_types.Ge) else meta.gt
        elif isinstance(meta, annotated_types.Le | annotated_types.Lt):
            high = meta.le if isinstance(meta, annotated_types.Le) else meta.lt
    return low, high


def _label(name: str) -> str:
    return name.replace("_", " ").replace("n ", "number of ", 1).capitalize() if name.startswith("n_") else name.replace("_", " ").capitalize()


def _is_device(annotation: Any) -> bool:
    return isinstance(annotation, types.UnionType) and int in typing.get_args(annotation) and str in typing.get_args(annotation)


class SectionForm(QWidget):
    """A form for the simple fields of one settings section; lists and dicts are left to custom pages.

    Bounds only widen to the field's limits (an exclusive limit stays enterable), so pydantic still
    gives the message when a value is out of range.
    """

    def __init__(self, section: BaseModel, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.section_type = type(section)
        self.editors: dict[str, QWidget] = {}
        layout = QFormLayout(self)
        for name, info in self.section_type.model_fields.items():
            editor = self._editor(name, info)
            if editor is None:
                continue
            editor.setObjectName(f"{title.lower()}.{name}")
            editor.setAccessibleName(f"{title}: {_label(name)}")
            if info.description:
                editor.setToolTip(info.description)
            self.editors[name] = editor
            layout.addRow(_label(name), editor)
        self.set_values(section)

    def _editor(self, name: str, info: FieldInfo) -> QWidget | None:
        annotation = info.annotation
        if typing.get_origin(annotation) is Literal:
            box = QComboBox()
            box.addItems([str(v) for v in typing.get_args(annotation)])
            return box
        if _is_device(annotation):
            box = QComboBox()
            box.setEditable(True)
            return box
        if annotation is bool:
            return QCheckBox()
        if annotation in (int, float):
            low, high = _bounds(info)
            spin = QSpinBox() if annotation is int else QDoubleSpinBox()
            if isinstance(spin, QDoubleSpinBox):
                spin.setDecimals(3)
                spin.setSingleStep(0.05)
            spin.setRange(low if low is not None else -1_000_000, high if high is not None else 1_000_000)
            return spin
        if annotation is str:
            return QLineEdit()
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if annotation == list[str] and extra.get("comma_list"):  # a short list (names), in one line
            edit = QLineEdit()
            edit.setProperty("comma_list", True)
            edit.setPlaceholderText("comma-separated")
            return edit
        return None

    def set_values(self, section: BaseModel) -> None:
        """Show a section's values."""
        for name, editor in self.editors.items():
            value = getattr(section, name)
            if isinstance(editor, QCheckBox):
                editor.setChecked(bool(value))
            elif isinstance(editor, QComboBox):
                text = "" if value is None else str(value)
                if editor.isEditable() and editor.findText(text) < 0:
                    editor.addItem(text)
                editor.setCurrentText(text)
            elif isinstance(editor, QSpinBox | QDoubleSpinBox):
                editor.setValue(value)
            elif isinstance(editor, QLineEdit) and editor.property("comma_list"):
                editor.setText(", ".join(value))
            elif isinstance(editor, QLineEdit):
                editor.setText(str(value))

    def values(self) -> dict[str, Any]:
        """The edited values as raw data for validation (device fields: '' -> None, digits -> int)."""
        raw: dict[str, Any] = {}
        for name, editor in self.editors.items():
            if isinstance(editor, QCheckBox):
                raw[name] = editor.isChecked()
            elif isinstance(editor, QComboBox) and editor.isEditable():
                text = editor.currentText().strip()
                raw[name] = None if not text else int(text) if text.isdigit() else text
            elif isinstance(editor, QComboBox):
                raw[name] = editor.currentText()
            elif isinstance(editor, QSpinBox | QDoubleSpinBox):
                raw[name] = editor.value()
            elif isinstance(editor, QLineEdit) and editor.property("comma_list"):
                raw[name] = [part.strip() for part in editor.text().split(",") if part.strip()]
            elif isinstance(editor, QLineEdit):
                raw[name] = editor.text()
        return raw
