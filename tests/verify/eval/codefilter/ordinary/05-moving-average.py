"""Simple and exponential moving averages of a temperature series."""
from collections import deque

temps = [12.0, 13.5, 15.1, 14.8, 16.2, 18.0, 17.4, 16.9, 19.3, 21.0]


def sma(values, n):
    window = deque(maxlen=n)
    out = []
    for v in values:
        window.append(v)
        out.append(sum(window) / len(window))
    return out


def ema(values, alpha):
    out = [values[0]]
    for v in values[1:]:
        out.append(alpha * v + (1 - alpha) * out[-1])
    return out


for t, s, e in zip(temps, sma(temps, 3), ema(temps, 0.5)):
    print(f"{t:5.1f} {s:6.2f} {e:6.2f}")
