"""General mix: the word banks its row makers draw from (most from text_banks.json)."""

from sample_data.common import TEXT

CONCEPTS = TEXT["CONCEPTS"]
TIPS = TEXT["TIPS"]
FORMAL = TEXT["FORMAL"]
GRAMMAR = TEXT["GRAMMAR"]
SYNONYMS = TEXT["SYNONYMS"]
ANIMALS = TEXT["ANIMALS"]
ANIMAL_NOTES = TEXT["ANIMAL_NOTES"]
WORDS = TEXT["WORDS"]
TOPIC_FACTS = TEXT["TOPIC_FACTS"]
END_PHRASES = [
    "Is there anything else I can help with?",
    "Let me know if you have additional questions.",
    "That is all for today.",
    "Thanks for reading.",
    "I hope this helps.",
    "Any other questions?",
]
IDEAS = TEXT["IDEAS"]
ELI5 = TEXT["ELI5"]
DIFFERENCES = TEXT["DIFFERENCES"]
MESSAGES = TEXT["MESSAGES"]
REVIEW_PRODUCTS = [
    "headphones",
    "coffee maker",
    "hiking boots",
    "desk lamp",
    "yoga mat",
    "phone case",
    "backpack",
    "blender",
    "novel",
    "office chair",
    "water bottle",
    "electric kettle",
]
REVIEW_POS = [
    "works exactly as described",
    "feels sturdy and well made",
    "arrived a day earlier than promised",
    "is worth every penny",
    "has held up perfectly after months of daily use",
    "is comfortable from the very first day",
    "looks even better than the photos",
]
REVIEW_NEG = [
    "stopped working after two weeks",
    "feels cheap and flimsy",
    "came with useless instructions",
    "is much smaller than the photos suggest",
    "broke the first time I dropped it",
    "smells strongly of plastic",
    "was missing a part",
]
NLI_PEOPLE = [
    "man",
    "woman",
    "child",
    "teenager",
    "chef",
    "cyclist",
    "student",
    "group of friends",
    "farmer",
    "musician",
]
NLI_ACTIONS = TEXT["NLI_ACTIONS"]
NLI_NEUTRAL = [
    "for the first time",
    "to win a bet",
    "while waiting for a friend",
    "on their birthday",
    "after a long day at work",
]
TEAMS = [
    "Riverside Rovers",
    "Northgate United",
    "the Harbor Hawks",
    "Eastfield City",
    "the Valley Foxes",
    "Lakeside Athletic",
]
COMPANIES = [
    "Brightwell Foods",
    "Northstar Logistics",
    "Kestrel Software",
    "Meridian Bank",
    "Solace Pharmaceuticals",
    "Tidewater Energy",
]
COUNTRIES = ["Norway", "Chile", "Kenya", "Vietnam", "Canada", "Portugal", "New Zealand", "Morocco", "Peru", "Finland"]
CONVERSIONS = TEXT["CONVERSIONS"]
INGREDIENTS = TEXT["INGREDIENTS"]
DISHES = [
    "a quick stir-fry",
    "a one-pan skillet",
    "a simple traybake",
    "a warm grain bowl",
    "loaded quesadillas",
    "a frittata",
    "a hearty soup",
]
FEELINGS = ["nervous", "anxious", "overwhelmed", "sad", "restless", "unmotivated"]
EVENTS = [
    "a job interview",
    "moving to a new city",
    "my first day at a new school",
    "giving a speech",
    "starting university",
    "a big exam",
    "going back to work after parental leave",
    "my driving test",
]
STUDY_SUBJECTS = [
    "biology",
    "chemistry",
    "algebra",
    "world history",
    "economics",
    "French",
    "statistics",
    "physics",
    "English literature",
    "geography",
]
PETS = TEXT["PETS"]
TRAITS = ["fluffy", "black", "orange", "tiny", "lazy", "very energetic"]
