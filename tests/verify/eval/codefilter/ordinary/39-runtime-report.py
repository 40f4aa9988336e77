"""Prints what Python is running this program."""
import platform
import sys

print("python", platform.python_version(), platform.python_implementation())
print("byte order", sys.byteorder, "max int size", sys.maxsize.bit_length() + 1)
print("recursion limit", sys.getrecursionlimit())
print("float epsilon", sys.float_info.epsilon)
