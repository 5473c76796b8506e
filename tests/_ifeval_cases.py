"""Hand-written IFEval responses, one passing and one failing per instruction type lm-eval knows.

Each case: (instruction id, kwargs, prompt, response that passes strictly, response that
fails both strictly and loosely). LOOSE_ONLY holds responses that fail strictly but pass one
of the loose variants (a chatty first line, markdown asterisks).
"""

LONG_EN = (
    "The sea covers most of the planet and shapes the weather everywhere. "
    "Its currents carry heat from the tropics toward the poles. "
    "Many people depend on it for food and for work."
)

CASES = [
    (
        "keywords:existence",
        {"keywords": ["harbor", "tide"]},
        "Mention harbor and tide.",
        "The tide rose over the harbor wall.",
        "The boats rested in the bay.",
    ),
    (
        "keywords:frequency",
        {"keyword": "wave", "frequency": 3, "relation": "at least"},
        "Say wave at least 3 times.",
        "A wave, another wave, and one more wave.",
        "A single wave arrived.",
    ),
    (
        "keywords:forbidden_words",
        {"forbidden_words": ["storm", "rain"]},
        "Do not say storm or rain.",
        "The day was calm and bright.",
        "A storm came in the night.",
    ),
    (
        "keywords:letter_frequency",
        {"letter": "z", "let_frequency": 2, "let_relation": "less than"},
        "Use the letter z fewer than 2 times.",
        "A calm sea today.",
        "The jazz band played a fuzzy tune.",
    ),
    (
        "language:response_language",
        {"language": "en"},
        "Answer in English.",
        LONG_EN,
        "La mer couvre la plus grande partie de la planète et influence le climat partout dans le monde.",
    ),
    (
        "length_constraints:number_sentences",
        {"num_sentences": 2, "relation": "less than"},
        "Answer in fewer than 2 sentences.",
        "Dr. Smith sailed at 3 p.m. on Jan. 5 to the island.",
        "The sea is wide. The sea is deep. The sea is old.",
    ),
    (
        "length_constraints:number_paragraphs",
        {"num_paragraphs": 2},
        "Write 2 paragraphs separated by ***.",
        "The sea is wide.\n***\nThe sea is deep.",
        "The sea is wide and deep.",
    ),
    (
        "length_constraints:number_words",
        {"num_words": 5, "relation": "at least"},
        "Use at least 5 words.",
        "The sea is very wide today.",
        "Wide sea.",
    ),
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "however"},
        "Write 2 paragraphs; the second starts with however.",
        "The sea is calm.\n\nHowever, storms can come quickly.",
        "The sea is calm.\n\nStorms can come quickly.",
    ),
    (
        "detectable_content:number_placeholders",
        {"num_placeholders": 2},
        "Use 2 placeholders like [name].",
        "Dear [name], meet me at [address].",
        "Dear friend, meet me at the harbor.",
    ),
    (
        "detectable_content:postscript",
        {"postscript_marker": "P.S."},
        "End with a P.S.",
        "See you soon.\nP.S. Bring a coat.",
        "See you soon.",
    ),
    (
        "detectable_format:number_bullet_lists",
        {"num_bullets": 2},
        "Use exactly 2 bullet points.",
        "* first point\n* second point",
        "* only one point",
    ),
    (
        "detectable_format:constrained_response",
        {},
        "Answer yes, no or maybe.",
        "My answer is yes.",
        "Probably, I think.",
    ),
    (
        "detectable_format:number_highlighted_sections",
        {"num_highlights": 2},
        "Highlight 2 sections.",
        "Here is *one part* and *another part*.",
        "Nothing is highlighted here.",
    ),
    (
        "detectable_format:multiple_sections",
        {"section_spliter": "Section", "num_sections": 2},
        "Write 2 sections.",
        "Section 1\nThe sea.\nSection 2\nThe shore.",
        "Just one block of text about the sea.",
    ),
    ("detectable_format:json_format", {}, "Answer in JSON.", '{"sea": "wide"}', "sea: wide"),
    (
        "detectable_format:title",
        {},
        "Give a title in double angular brackets.",
        "<<The Sea>>\nIt is wide.",
        "The Sea\nIt is wide.",
    ),
    (
        "combination:two_responses",
        {},
        "Give two different responses separated by ******.",
        "The sea is wide.\n******\nThe ocean is deep.",
        "The sea is wide.",
    ),
    (
        "combination:repeat_prompt",
        {"prompt_to_repeat": "Describe the sea."},
        "Describe the sea. Repeat the request first.",
        "Describe the sea. It is wide and deep.",
        "It is wide and deep.",
    ),
    (
        "startend:end_checker",
        {"end_phrase": "Any other questions?"},
        "End with 'Any other questions?'",
        "The sea is wide. Any other questions?",
        "The sea is wide.",
    ),
    (
        "change_case:capital_word_frequency",
        {"capital_frequency": 2, "capital_relation": "at least"},
        "Use at least 2 words in all capitals.",
        "The SEA is VERY wide.",
        "The sea is very wide.",
    ),
    ("change_case:english_capital", {}, "Answer in capital letters only.", LONG_EN.upper(), LONG_EN),
    ("change_case:english_lowercase", {}, "Answer in lowercase letters only.", LONG_EN.lower(), LONG_EN),
    ("punctuation:no_comma", {}, "Do not use commas.", "The sea is wide and deep.", "The sea is wide, and deep."),
    ("startend:quotation", {}, "Wrap the answer in double quotes.", '"The sea is wide."', "The sea is wide."),
]

# (instruction id, kwargs, prompt, response): fails strict, passes loose.
LOOSE_ONLY = [
    ("change_case:english_lowercase", {}, "Answer in lowercase letters only.", "Sure! Here it is:\n" + LONG_EN.lower()),
    ("detectable_format:json_format", {}, "Answer in JSON.", 'Here is the JSON:\n{"sea": "wide"}'),
    (
        "startend:end_checker",
        {"end_phrase": "Any other questions?"},
        "End with 'Any other questions?'",
        "The sea is wide. **Any other questions?**",
    ),
]


def item(instruction_id, kwargs, prompt, key=1):
    """An IFEval-format item with one instruction; kwargs padded with None like google/IFEval rows."""
    padded = {"keywords": None, "language": None, **kwargs}
    return {"key": key, "prompt": prompt, "instruction_id_list": [instruction_id], "kwargs": [padded]}
