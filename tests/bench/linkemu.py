#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A user-space wide-area link emulator (kernel netem is not available on our machines).

Listens on --listen, forwards every TCP connection to --upstream, and shapes the traffic like a long path:
  * each connection is limited to window / RTT bytes per second in each direction (what one TCP stream can
    reach on a path with that round-trip time and window, the limit multi-streaming works around), and
  * all connections together share --capacity bytes per second (the link's bandwidth),
  * every byte is delayed by RTT / 2 in each direction.
Standard library only; good for tens of MB/s, which is what wide-area links are.
"""
import argparse
import asyncio
import time


class Bucket:
    """A token bucket: take(n) waits until n bytes may pass."""

    def __init__(self, rate, burst):
        self.rate, self.burst = rate, burst
        self.tokens, self.stamp = burst, time.monotonic()
        self.lock = asyncio.Lock()

    async def take(self, n):
        async with self.lock:
            while True:
                now = time.monotonic()
                self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
                self.stamp = now
                if self.tokens >= n:
                    self.tokens -= n
                    return
                await asyncio.sleep((n - self.tokens) / self.rate)


async def pump(reader, writer, per_connection, link, delay):
    queue = asyncio.Queue()

    async def deliver():
        while True:
            due, data = await queue.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.create_task(deliver())
    try:
        while True:
            data = await reader.read(16384)
            if not data:
                break
            await per_connection.take(len(data))
            await link.take(len(data))
            queue.put_nowait((time.monotonic() + delay, data))
    except (ConnectionError, OSError):
        pass
    queue.put_nowait((0, None))
    try:
        await sender
    except (ConnectionError, OSError):
        pass


async def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--listen", type=int, required=True)
    p.add_argument("--upstream", type=int, required=True)
    p.add_argument("--rtt-ms", type=float, default=50.0)
    p.add_argument("--window-kib", type=float, default=64.0)
    p.add_argument("--capacity-mbit", type=float, default=100.0)
    a = p.parse_args()
    rtt = a.rtt_ms / 1000.0
    per_rate = a.window_kib * 1024 / rtt
    link_up = Bucket(a.capacity_mbit * 1e6 / 8, 64 * 1024)
    link_down = Bucket(a.capacity_mbit * 1e6 / 8, 64 * 1024)

    async def handle(client_reader, client_writer):
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", a.upstream)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(
            pump(client_reader, up_writer, Bucket(per_rate, 16384), link_up, rtt / 2),
            pump(up_reader, client_writer, Bucket(per_rate, 16384), link_down, rtt / 2))

    server = await asyncio.start_server(handle, "127.0.0.1", a.listen)
    print(f"linkemu: 127.0.0.1:{a.listen} -> {a.upstream}, RTT {a.rtt_ms} ms, window {a.window_kib} KiB "
          f"({per_rate / 1e6:.2f} MB/s per connection), link {a.capacity_mbit} Mbit/s", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
