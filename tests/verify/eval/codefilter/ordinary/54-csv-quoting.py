"""Round-trips awkward values (commas, quotes, newlines) through CSV."""
import csv
import io

rows = [["id", "comment"], [1, 'says "hi", then leaves'],
        [2, "multi\nline"], [3, ""], [4, "semi;colon"]]
buf = io.StringIO()
csv.writer(buf, quoting=csv.QUOTE_MINIMAL).writerows(rows)
text = buf.getvalue()
print(text)
back = list(csv.reader(io.StringIO(text)))
assert back[1][1] == rows[1][1] and back[2][1] == "multi\nline"
print(len(back), "rows survived the round trip")
