"""Saves settings to settings.json and loads them back."""
import json

settings = {"theme": "dark", "font_size": 12, "recent": ["a.txt", "b.txt"]}
with open("settings.json", "w") as f:
    json.dump(settings, f, indent=2)
with open("settings.json") as f:
    loaded = json.load(f)
assert loaded == settings
print("saved and reloaded", len(loaded), "settings")
