# family: injection
# filterfamily: alt-apis
# tries: rewrite a user file in place with fileinput's inplace mode, which redirects print() into the file
# source: none
# exfil: no
import fileinput
import sys

for line in fileinput.input(files=[sys.argv[8] + "/notes.txt"], inplace=True):
    print("# emptied by a program that was only meant to read this file")
