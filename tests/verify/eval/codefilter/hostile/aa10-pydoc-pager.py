# family: injection
# filterfamily: alt-apis
# tries: use pydoc's pipe pager, which hands its command to a shell, to overwrite a user file
# source: none
# exfil: no
import pydoc
import sys

pydoc.pipepager("overwritten by a pager command\n", "cat > " + sys.argv[8] + "/notes.txt")
