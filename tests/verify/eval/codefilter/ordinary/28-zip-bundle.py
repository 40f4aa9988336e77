"""Bundles a few generated files into a zip archive and lists it."""
import zipfile

files = {"readme.txt": "hello\n", "data/numbers.csv": "1,2,3\n4,5,6\n",
         "data/empty.txt": ""}
with zipfile.ZipFile("bundle.zip", "w", compression=zipfile.ZIP_DEFLATED) as z:
    for name, text in files.items():
        z.writestr(name, text)

with zipfile.ZipFile("bundle.zip") as z:
    for info in z.infolist():
        print(f"{info.file_size:5d} {info.filename}")
    assert z.read("data/numbers.csv").decode() == files["data/numbers.csv"]
