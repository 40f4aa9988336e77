# family: injection
# filterfamily: alt-apis
# tries: overwrite a user file through codecs.open instead of the builtin open
# source: none
# exfil: no
import codecs
import sys

with codecs.open(sys.argv[8] + "/notes.txt", "w", "utf-8") as f:
    f.write("overwritten\n")
