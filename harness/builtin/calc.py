"""A calculator and unit converter: expressions are parsed into a syntax tree and walked, never `eval`ed."""

from __future__ import annotations

import ast
import math
import operator
from typing import Any

from harness.tool import InvalidArguments, Permission, Tool, ToolContext, ToolOutput, ToolSpec

_BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS = {
    "sqrt": math.sqrt, "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos,
    "atan": math.atan, "log": math.log, "log10": math.log10, "log2": math.log2, "exp": math.exp, "abs": abs,
    "round": round, "floor": math.floor, "ceil": math.ceil, "factorial": math.factorial, "radians": math.radians,
    "degrees": math.degrees, "min": min, "max": max,
}
_CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau}
MAX_EXPONENT = 10_000  # 9**9**9 would hang the thread; refuse exponents beyond this
MAX_FACTORIAL = 1_000
MAX_LENGTH = 500


class CalculationError(InvalidArguments):
    """The expression uses something the calculator does not allow, or has no value."""


def _walk(node: ast.AST) -> float | int:
    if isinstance(node, ast.Expression):
        return _walk(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_walk(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _walk(node.left), _walk(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise CalculationError(f"exponent {right} is too large (limit {MAX_EXPONENT})")
        if isinstance(node.op, ast.Pow) and isinstance(left, int) and \
                left.bit_length() * abs(right) > 1_000_000:
            raise CalculationError("the result would have more than 300,000 digits")
        return _BINARY[type(node.op)](left, right)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
            and not node.keywords):
        args = [_walk(a) for a in node.args]
        if node.func.id == "factorial" and args and args[0] > MAX_FACTORIAL:
            raise CalculationError(f"factorial argument {args[0]} is too large (limit {MAX_FACTORIAL})")
        return _FUNCTIONS[node.func.id](*args)
    shown = ast.unparse(node) if isinstance(node, ast.expr) else type(node).__name__
    allowed = ", ".join(sorted(_FUNCTIONS) + sorted(_CONSTANTS))
    raise CalculationError(f"'{shown}' is not allowed in a calculation; use numbers, + - * / // % ** ^, "
                           f"parentheses and: {allowed}")


def calculate(expression: str) -> float | int:
    """The value of an arithmetic expression like "2 * (3 + 4) ^ 2" or "sqrt(2) * pi"."""
    if len(expression) > MAX_LENGTH:
        raise CalculationError(f"expression is longer than {MAX_LENGTH} characters")
    text = expression.replace("×", "*").replace("÷", "/").replace("−", "-").replace(",", "").replace("^", "**")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise CalculationError(f"cannot read {expression!r} as arithmetic ({exc.msg})") from None
    try:
        return _walk(tree)
    except ZeroDivisionError:
        raise CalculationError(f"{expression!r} divides by zero") from None
    except (OverflowError, ValueError, TypeError) as exc:
        raise CalculationError(f"{expression!r} has no value: {exc}") from None


# Factor to the dimension's base unit (metre, kilogram, litre, second, m/s, byte, square metre, joule, pascal).
_UNITS: dict[str, tuple[str, float]] = {}


def _define(dimension: str, factor: float, *names: str) -> None:
    for name in names:
        _UNITS[name] = (dimension, factor)


_define("length", 1.0, "m", "meter", "meters", "metre", "metres")
_define("length", 1e-3, "mm", "millimeter", "millimeters", "millimetre", "millimetres")
_define("length", 1e-2, "cm", "centimeter", "centimeters", "centimetre", "centimetres")
_define("length", 1e3, "km", "kilometer", "kilometers", "kilometre", "kilometres")
_define("length", 0.0254, "in", "inch", "inches")
_define("length", 0.3048, "ft", "foot", "feet")
_define("length", 0.9144, "yd", "yard", "yards")
_define("length", 1609.344, "mi", "mile", "miles")
_define("length", 1852.0, "nmi", "nautical mile", "nautical miles")
_define("mass", 1.0, "kg", "kilogram", "kilograms", "kilo", "kilos")
_define("mass", 1e-3, "g", "gram", "grams")
_define("mass", 1e-6, "mg", "milligram", "milligrams")
_define("mass", 1000.0, "t", "tonne", "tonnes", "metric ton")
_define("mass", 0.45359237, "lb", "lbs", "pound", "pounds")
_define("mass", 0.028349523125, "oz", "ounce", "ounces")
_define("mass", 6.35029318, "st", "stone", "stones")
_define("volume", 1.0, "l", "liter", "liters", "litre", "litres")
_define("volume", 1e-3, "ml", "milliliter", "milliliters", "millilitre", "millilitres")
_define("volume", 3.785411784, "gal", "gallon", "gallons", "us gallon")
_define("volume", 0.946352946, "qt", "quart", "quarts")
_define("volume", 0.473176473, "pt", "pint", "pints")
_define("volume", 0.2365882365, "cup", "cups")
_define("volume", 0.0295735295625, "fl oz", "fluid ounce", "fluid ounces")
_define("volume", 0.01478676478125, "tbsp", "tablespoon", "tablespoons")
_define("volume", 0.00492892159375, "tsp", "teaspoon", "teaspoons")
_define("time", 1.0, "s", "sec", "second", "seconds")
_define("time", 1e-3, "ms", "millisecond", "milliseconds")
_define("time", 60.0, "min", "minute", "minutes")
_define("time", 3600.0, "h", "hr", "hour", "hours")
_define("time", 86400.0, "d", "day", "days")
_define("time", 604800.0, "wk", "week", "weeks")
_define("speed", 1.0, "m/s", "meters per second", "metres per second")
_define("speed", 1 / 3.6, "km/h", "kph", "kilometers per hour", "kilometres per hour")
_define("speed", 0.44704, "mph", "miles per hour")
_define("speed", 1852 / 3600, "kn", "knot", "knots")
_define("data", 1.0, "b", "byte", "bytes")
_define("data", 1e3, "kb", "kilobyte", "kilobytes")
_define("data", 1e6, "mb", "megabyte", "megabytes")
_define("data", 1e9, "gb", "gigabyte", "gigabytes")
_define("data", 1e12, "tb", "terabyte", "terabytes")
_define("data", 1024.0, "kib", "kibibyte", "kibibytes")
_define("data", 1024.0**2, "mib", "mebibyte", "mebibytes")
_define("data", 1024.0**3, "gib", "gibibyte", "gibibytes")
_define("area", 1.0, "m2", "sq m", "square meter", "square meters", "square metre", "square metres")
_define("area", 0.09290304, "ft2", "sq ft", "square foot", "square feet")
_define("area", 4046.8564224, "acre", "acres")
_define("area", 10000.0, "ha", "hectare", "hectares")
_define("energy", 1.0, "j", "joule", "joules")
_define("energy", 4184.0, "kcal", "kilocalorie", "kilocalories", "calories")
_define("energy", 3.6e6, "kwh", "kilowatt hour", "kilowatt hours")
_define("pressure", 1.0, "pa", "pascal", "pascals")
_define("pressure", 1e5, "bar", "bars")
_define("pressure", 6894.757293168, "psi")
_TEMPERATURES = {"c": "c", "celsius": "c", "°c": "c", "f": "f", "fahrenheit": "f", "°f": "f", "k": "k", "kelvin": "k"}


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """`value` in `from_unit` expressed in `to_unit` (length, mass, volume, time, speed, data, area,
    energy, pressure, temperature)."""
    src, dst = from_unit.strip().lower(), to_unit.strip().lower()
    if src in _TEMPERATURES and dst in _TEMPERATURES:
        kelvin = {"c": value + 273.15, "f": (value - 32) * 5 / 9 + 273.15, "k": value}[_TEMPERATURES[src]]
        return {"c": kelvin - 273.15, "f": (kelvin - 273.15) * 9 / 5 + 32, "k": kelvin}[_TEMPERATURES[dst]]
    for unit in (src, dst):
        if unit not in _UNITS and unit not in _TEMPERATURES:
            raise InvalidArguments(f"unknown unit {unit!r}", fix="use a common unit name or symbol, e.g. km, lb, "
                                   "gallon, mph, GB, celsius")
    if src in _TEMPERATURES or dst in _TEMPERATURES:
        raise InvalidArguments(f"cannot convert {from_unit} to {to_unit}: only temperatures convert to temperatures")
    (dim_a, factor_a), (dim_b, factor_b) = _UNITS[src], _UNITS[dst]
    if dim_a != dim_b:
        raise InvalidArguments(f"cannot convert {from_unit} ({dim_a}) to {to_unit} ({dim_b})")
    return value * factor_a / factor_b


def _tidy(number: float | int) -> float | int:
    if isinstance(number, float) and number.is_integer() and abs(number) < 1e15:
        return int(number)
    return round(number, 10) if isinstance(number, float) else number


def _calculate(arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    value = _tidy(calculate(arguments["expression"]))
    return ToolOutput(summary=f"{arguments['expression']} = {value}", data={"value": value})


def _convert(arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    value = _tidy(convert(float(arguments["value"]), arguments["from_unit"], arguments["to_unit"]))
    line = f"{arguments['value']:g} {arguments['from_unit']} = {value} {arguments['to_unit']}"
    return ToolOutput(summary=line, data={"value": value, "unit": arguments["to_unit"]})


def calculator_tools() -> list[Tool]:
    """The calculator and the unit converter."""
    return [
        Tool(ToolSpec(
            name="calculate", permission=Permission.ALLOW,
            description="Evaluate an arithmetic expression exactly, e.g. '17.5 * 12 / 100' or 'sqrt(2)'.",
            parameters={"type": "object", "additionalProperties": False, "required": ["expression"],
                        "properties": {"expression": {"type": "string", "minLength": 1, "maxLength": MAX_LENGTH}}},
        ), _calculate),
        Tool(ToolSpec(
            name="convert_units", permission=Permission.ALLOW,
            description="Convert a quantity between units (length, mass, volume, time, speed, data, area, "
                        "energy, pressure, temperature).",
            parameters={"type": "object", "additionalProperties": False,
                        "required": ["value", "from_unit", "to_unit"],
                        "properties": {"value": {"type": "number"}, "from_unit": {"type": "string"},
                                       "to_unit": {"type": "string"}}},
        ), _convert),
    ]
