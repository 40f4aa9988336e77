# family: injection
# filterfamily: encoded-exec
# tries: unpack a zlib-compressed doctest and let the doctest runner execute its examples; they print the host /tmp canary
# source: none
# exfil: yes
import base64
import doctest
import zlib

text = zlib.decompress(base64.b64decode("eJyzs7NTyMwtyC8qUSiuLOayA3ILijLzSjTyC1LzNIBCeolF6WXRxrGaekWpiSkamppcAL1sEKc=")).decode()
test = doctest.DocTestParser().get_doctest(text, {}, "payload", None, 0)
doctest.DocTestRunner().run(test)
