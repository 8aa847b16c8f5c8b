"""Word tables for `engine.tts.normalize`: how English units, currencies, operators and abbreviations are said.

Written by hand for Venus from ordinary US English usage (the voice is en-US); each table is the whole list the
normalizer knows, so adding a unit or an abbreviation is a one-line change here and not a new rule there.
"""

from __future__ import annotations

# Unit symbols read after a number: symbol -> (singular, plural). Case matters ("m" metre, "M" is not a unit).
UNITS: dict[str, tuple[str, str]] = {
    "km/h": ("kilometer per hour", "kilometers per hour"), "kph": ("kilometer per hour", "kilometers per hour"),
    "mph": ("mile per hour", "miles per hour"), "m/s": ("meter per second", "meters per second"),
    "km²": ("square kilometer", "square kilometers"), "m²": ("square meter", "square meters"),
    "cm²": ("square centimeter", "square centimeters"), "ft²": ("square foot", "square feet"),
    "m³": ("cubic meter", "cubic meters"),
    "km": ("kilometer", "kilometers"), "m": ("meter", "meters"), "cm": ("centimeter", "centimeters"),
    "mm": ("millimeter", "millimeters"), "mi": ("mile", "miles"), "ft": ("foot", "feet"), "yd": ("yard", "yards"),
    "in": ("inch", "inches"),  # only attached ("5in") or before punctuation: see IN_NEEDS
    "kg": ("kilogram", "kilograms"), "g": ("gram", "grams"), "mg": ("milligram", "milligrams"),
    "lb": ("pound", "pounds"), "lbs": ("pound", "pounds"), "oz": ("ounce", "ounces"),
    "l": ("liter", "liters"), "L": ("liter", "liters"), "ml": ("milliliter", "milliliters"),
    "mL": ("milliliter", "milliliters"),
    "°C": ("degree Celsius", "degrees Celsius"), "°F": ("degree Fahrenheit", "degrees Fahrenheit"),
    "° C": ("degree Celsius", "degrees Celsius"), "° F": ("degree Fahrenheit", "degrees Fahrenheit"),
    "TB": ("terabyte", "terabytes"), "GB": ("gigabyte", "gigabytes"), "MB": ("megabyte", "megabytes"),
    "KB": ("kilobyte", "kilobytes"), "kB": ("kilobyte", "kilobytes"),
    "GHz": ("gigahertz", "gigahertz"), "MHz": ("megahertz", "megahertz"), "kHz": ("kilohertz", "kilohertz"),
    "Hz": ("hertz", "hertz"), "kWh": ("kilowatt hour", "kilowatt hours"), "kW": ("kilowatt", "kilowatts"),
    "W": ("watt", "watts"),
    "ms": ("millisecond", "milliseconds"), "s": ("second", "seconds"), "sec": ("second", "seconds"),
    "secs": ("second", "seconds"), "min": ("minute", "minutes"), "mins": ("minute", "minutes"),
    "h": ("hour", "hours"), "hr": ("hour", "hours"), "hrs": ("hour", "hours"),
}

# Currency symbols and codes: symbol -> (one, many, one hundredth, many hundredths); "" = no cents.
CURRENCIES: dict[str, tuple[str, str, str, str]] = {
    "$": ("dollar", "dollars", "cent", "cents"), "€": ("euro", "euros", "cent", "cents"),
    "£": ("pound", "pounds", "penny", "pence"), "¥": ("yen", "yen", "", ""),
}
CURRENCY_CODES: dict[str, str] = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "dollar": "$"}

# Operators between two numbers.
OPERATORS: dict[str, str] = {
    "+": "plus", "-": "minus", "–": "minus", "×": "times", "x": "times", "*": "times", "·": "times",
    "/": "divided by", "÷": "divided by", "=": "equals", "^": "to the power of", "<": "is less than",
    ">": "is greater than", "≤": "is at most", "≥": "is at least", "≠": "does not equal", "≈": "is about",
}

# Fractions with their own names (others are ordinals: "two fifths").
FRACTIONS: dict[int, tuple[str, str]] = {2: ("half", "halves"), 4: ("quarter", "quarters")}

VULGAR_FRACTIONS: dict[str, str] = {"½": "one half", "⅓": "one third", "⅔": "two thirds", "¼": "one quarter",
                                    "¾": "three quarters", "⅛": "one eighth"}

# Month names and their usual abbreviations -> the name said.
MONTHS: dict[str, str] = {
    **{m: m for m in ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                      "October", "November", "December")},
    "Jan": "January", "Feb": "February", "Mar": "March", "Apr": "April", "Jun": "June", "Jul": "July",
    "Aug": "August", "Sep": "September", "Sept": "September", "Oct": "October", "Nov": "November",
    "Dec": "December",
}

# Words after which a four-digit number from 1100 to 2099 is a year ("in 1999", "since 2010").
YEAR_CUES = "in|since|by|from|until|till|before|after|around|circa|during|of|year|through|early|mid|late"

# Abbreviations: (regex, said, may end a sentence). For those that may ("etc."), a period that also ended the
# sentence is kept; a said form ending in "," keeps the comma only before a word.
ABBREVIATIONS: list[tuple[str, str, bool]] = [
    (r"[Ee]\.\s?g\.,?", "for example,", False), (r"[Ii]\.\s?e\.,?", "that is,", False),
    (r"[Ee]tc\.", "et cetera", True), (r"vs\.?", "versus", False), (r"[Aa]pprox\.", "approximately", False),
    (r"[Ii]ncl\.", "including", False), (r"[Ee]sp\.", "especially", False), (r"a\.k\.a\.", "also known as", False),
    (r"et al\.", "and others", True),
    (r"Dr\.", "Doctor", False), (r"Mr\.", "Mister", False), (r"Mrs\.", "Missus", False), (r"Ms\.", "Miz", False),
    (r"Prof\.", "Professor", False), (r"Jr\.", "Junior", True), (r"Sr\.", "Senior", True),
    (r"No\.(?=\s?[0-9])", "number", False), (r"Fig\.(?=\s?[0-9])", "figure", False),
    (r"ca\.(?=\s?[0-9])", "about", False),
]

# "a/b" pairs that are idioms, not fractions.
SLASH_IDIOMS: dict[tuple[str, str], str] = {("24", "7"): "twenty-four seven", ("50", "50"): "fifty-fifty",
                                            ("9", "11"): "nine eleven"}

# Words after "/" that make it "per": "$50/month", "3 times/day".
PER_WORDS = "month|mo|day|year|yr|week|wk|hour|night|person|head|unit|item|piece|serving|user|seat|kg|lb|gallon|liter"

# File extensions recognised in bare file names ("notes.txt"); short ones are spelled ("t x t").
EXTENSIONS = ("txt|md|py|js|ts|tsx|jsx|json|csv|tsv|pdf|docx?|xlsx?|pptx?|odt|png|jpe?g|gif|svg|webp|mp3|mp4|"
              "wav|flac|ogg|zip|tar|gz|tgz|html?|css|ya?ml|toml|ini|cfg|conf|log|sh|bat|exe|dmg|deb|rpm|cpp|hpp|"
              "rs|go|java|rb|sql|db|sqlite|xml|ipynb|lock|kt|swift")
EXTENSIONS_SAID_AS_WORDS = frozenset({"json", "yaml", "toml", "java", "zip", "log", "lock", "conf", "gif", "swift",
                                      "go", "sqlite", "tar", "jpeg", "flac", "ogg", "deb", "webp"})
