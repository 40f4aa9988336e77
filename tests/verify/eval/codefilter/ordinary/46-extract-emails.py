"""Extracts and normalises e-mail addresses from free text."""
import re

TEXT = """Contact Alice.Smith@Example.com or bob@example.org; the old address
bob@example.org is still read. Not an address: foo@bar, @handle, x@y.z9."""
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-zA-Z]{2,}")
found = sorted({m.lower() for m in EMAIL.findall(TEXT)})
print(found)
assert found == ["alice.smith@example.com", "bob@example.org"]
