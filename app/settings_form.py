"""Editors for settings fields, described for people: a label, a unit and one line of help per field.

`FieldSpec` says how one field of engine.settings is shown; `SectionEditors` builds one widget per field of
a section and reads them back as raw data for pydantic; `FormPage` lays fields out in titled groups with the
help line under each. Bounds only widen to the field's limits (an exclusive limit stays enterable), so
pydantic still gives the message when a value is out of range.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

Choice = tuple[str, Any]  # (what the user reads, the value stored)


@dataclass(frozen=True)
class FieldSpec:
    """How one settings field is shown: `key` is "section.field"."""

    key: str
    label: str
    help: str = ""
    unit: str = ""  # shown after the number: "ms", "s", "tokens", "%"
    scale: float = 1.0  # shown = stored * scale (a 0..1 gain shown as 0..100 %)
    choices: tuple[Choice, ...] = ()  # a fixed list; dynamic lists are filled later with `set_choices`
    chooser: bool = False  # a dropdown whose items come later (devices, voices, models)
    editable: bool = False  # a dropdown that also takes typed text (a camera path or URL)
    multiline: bool = False
    special: str = ""  # shown instead of the lowest value when it means something else ("Automatic")

    @property
    def section(self) -> str:
        """The settings section, e.g. "llm"."""
        return self.key.split(".", 1)[0]

    @property
    def name(self) -> str:
        """The field name inside its section, e.g. "n_ctx"."""
        return self.key.split(".", 1)[1]


def _bounds(info: FieldInfo) -> tuple[float | None, float | None]:
    low = high = None
    for meta in info.metadata:
        if isinstance(meta, annotated_types.Ge | annotated_types.Gt):
            low = meta.ge if isinstance(meta, annotated_types.Ge) else meta.gt
        elif isinstance(meta, annotated_types.Le | annotated_types.Lt):
            high = meta.le if isinstance(meta, annotated_types.Le) else meta.lt
    return low, high


def _is_device(annotation: Any) -> bool:
    return isinstance(annotation, types.UnionType) and int in typing.get_args(annotation) and str in typing.get_args(annotation)


def combo_values(box: QComboBox) -> list[Any]:
    """The stored value behind every item of a dropdown."""
    return [box.itemData(i) for i in range(box.count())]


def select_value(box: QComboBox, value: Any, missing: str = "{value} (not available)") -> None:
    """Select the item storing `value`; a value not listed is added (named as missing) so it is never lost."""
    for i in range(box.count()):
        data = box.itemData(i)
        if data == value or (box.isEditable() and value is not None and str(data) == str(value)):
            box.setCurrentIndex(i)
            return
    if box.isEditable():
        box.setCurrentText("" if value is None else str(value))
        return
    box.addItem(missing.format(value=value), value)
    box.setCurrentIndex(box.count() - 1)


def fill_choices(box: QComboBox, choices: list[Choice] | tuple[Choice, ...], keep: Any = ...) -> None:
    """Replace a dropdown's items, keeping the selected value (or selecting `keep`)."""
    value = box.currentData() if keep is ... else keep
    if box.isEditable() and keep is ... and box.currentIndex() < 0:
        value = box.currentText()
    box.blockSignals(True)
    box.clear()
    for label, data in choices:
        box.addItem(label, data)
    box.blockSignals(False)
    select_value(box, value)


class SectionEditors:
    """One editor widget per shown field of a settings section; `values()` gives raw data for validation."""

    def __init__(self, section: BaseModel, specs: list[FieldSpec]) -> None:
        self.section_type = type(section)
        self.specs = {spec.name: spec for spec in specs}
        self.editors: dict[str, QWidget] = {}
        for spec in specs:
            editor = self._editor(spec, self.section_type.model_fields[spec.name])
            editor.setObjectName(spec.key)
            editor.setAccessibleName(spec.label)
            if spec.help:
                editor.setAccessibleDescription(spec.help)
                editor.setToolTip(spec.help)
            self.editors[spec.name] = editor
        self.set_values(section)

    def _editor(self, spec: FieldSpec, info: FieldInfo) -> QWidget:
        annotation = info.annotation
        if spec.choices or spec.chooser or typing.get_origin(annotation) is Literal or _is_device(annotation):
            box = QComboBox()
            box.setEditable(spec.editable)
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(24)
            choices = spec.choices or tuple((str(v), v) for v in typing.get_args(annotation) if typing.get_origin(annotation) is Literal)
            for label, value in choices:
                box.addItem(label, value)
            return box
        if annotation is bool:
            return QCheckBox(spec.label)
        if annotation in (int, float):
            low, high = _bounds(info)
            scaled = spec.scale != 1.0
            spin = QSpinBox() if annotation is int and not scaled else QDoubleSpinBox()
            if isinstance(spin, QDoubleSpinBox):
                spin.setDecimals(0 if scaled else 1 if spec.unit in ("s", "per s", "°", "dB", "Hz", "levels") else 2)
                spin.setSingleStep(5 if scaled else 0.05)
            spin.setRange(low * spec.scale if low is not None else -1_000_000, high * spec.scale if high is not None else 1e9)
            if spec.unit:
                spin.setSuffix(f" {spec.unit}")
            spin.setSpecialValueText(spec.special)
            return spin
        if annotation is str and spec.multiline:
            edit = QPlainTextEdit()
            edit.setTabChangesFocus(True)
            edit.setFixedHeight(80)
            return edit
        if annotation is str:
            return QLineEdit()
        if annotation == list[str]:  # a short list (names), in one line
            edit = QLineEdit()
            edit.setProperty("comma_list", True)
            edit.setPlaceholderText("comma-separated")
            return edit
        raise TypeError(f"{spec.key} has no editor for {annotation}; give it a page of its own")

    def set_values(self, section: BaseModel) -> None:
        """Show a section's values."""
        for name, editor in self.editors.items():
            value = getattr(section, name)
            spec = self.specs[name]
            if isinstance(editor, QCheckBox):
                editor.setChecked(bool(value))
            elif isinstance(editor, QComboBox):
                select_value(editor, value)
            elif isinstance(editor, QSpinBox | QDoubleSpinBox):
                editor.setValue(value * spec.scale)
            elif isinstance(editor, QPlainTextEdit):
                editor.setPlainText(str(value))
            elif isinstance(editor, QLineEdit) and editor.property("comma_list"):
                editor.setText(", ".join(value))
            elif isinstance(editor, QLineEdit):
                editor.setText(str(value))

    def values(self) -> dict[str, Any]:
        """The edited values as raw data (an editable dropdown's typed digits become a device index)."""
        raw: dict[str, Any] = {}
        for name, editor in self.editors.items():
            spec = self.specs[name]
            if isinstance(editor, QCheckBox):
                raw[name] = editor.isChecked()
            elif isinstance(editor, QComboBox) and editor.isEditable():
                index = editor.findText(editor.currentText())
                text = editor.currentText().strip()
                raw[name] = editor.itemData(index) if index >= 0 else int(text) if text.isdigit() else text or None
            elif isinstance(editor, QComboBox):
                raw[name] = editor.currentData()
            elif isinstance(editor, QSpinBox | QDoubleSpinBox):
                value = editor.value() / spec.scale
                raw[name] = round(value) if self.section_type.model_fields[name].annotation is int else round(value, 6)
            elif isinstance(editor, QPlainTextEdit):
                raw[name] = editor.toPlainText()
            elif isinstance(editor, QLineEdit) and editor.property("comma_list"):
                raw[name] = [part.strip() for part in editor.text().split(",") if part.strip()]
            elif isinstance(editor, QLineEdit):
                raw[name] = editor.text()
        return raw


def help_label(text: str) -> QLabel:
    """The one line of help shown under a field, small and grey."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setObjectName("fieldHelp")
    label.setStyleSheet("color: palette(placeholder-text); font-size: 11px")
    label.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
    return label


class FormGroup(QGroupBox):
    """A titled group of fields: the label on the left, the editor with its help line under it on the right."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(title, parent)
        self.form = QFormLayout(self)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
        self.labels: list[QLabel] = []

    def add_field(self, spec: FieldSpec, editor: QWidget, extra: QWidget | None = None) -> None:
        """One field: label (none for a checkbox, which carries its own), editor, an optional extra, help."""
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(1)
        column.addWidget(editor)
        if extra is not None:
            column.addWidget(extra)
        if spec.help:
            column.addWidget(help_label(spec.help))
        self._add_row("" if isinstance(editor, QCheckBox) else spec.label, box)

    def add_widget(self, widget: QWidget, label: str = "") -> None:
        """A row that is not a settings field (a button, a meter)."""
        self._add_row(label, widget)

    def _add_row(self, text: str, field: QWidget) -> None:
        label = QLabel(text)
        label.setBuddy(field)
        self.labels.append(label)
        self.form.addRow(label, field)

    def label_width(self) -> int:
        """The widest label's width."""
        return max((label.sizeHint().width() for label in self.labels), default=0)

    def align_labels(self, width: int) -> None:
        """Give every label `width`, so the fields of the groups on one page start in one column."""
        for label in self.labels:
            label.setMinimumWidth(width)
