#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.

"""A slow link: a TCP proxy that delays what the server sends.

The machine's kernel has no netem, so a test that needs a long round trip
puts this proxy between its clients and the server::

    proxy = self.useFixture(slowlink.DelayProxy(host.address, port, 2.0))
    url = "...@127.0.0.1:%d/..." % proxy.port

Every chunk the server sends reaches the client :attr:`DelayProxy.delay`
seconds later (in order); what the client sends goes through at once, so
the round trip grows by the delay. The delay may be changed while the
proxy runs (``proxy.delay = 0`` heals the link). The proxy runs in a thread
of the test's process, on 127.0.0.1, and stops at cleanup.
"""

import asyncio
import threading

import fixtures

#: Bytes read at once from either side.
CHUNK = 65536


class DelayProxy(fixtures.Fixture):
    """Forward 127.0.0.1:``port`` to ``address:port``, delaying replies.

    :param address: the server's address.
    :param port: the server's port.
    :param delay: seconds added to each server → client chunk.
    :ivar port: the proxy's own port on 127.0.0.1, once set up.
    """

    def __init__(self, address, port, delay):
        super().__init__()
        self.target = (address, port)
        self.delay = delay
        self.port = None
        self._loop = None
        self._thread = None
        self._server = None

    def _setUp(self):
        self._loop = asyncio.new_event_loop()
        started = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(started,),
                                        name="slowlink", daemon=True)
        self._thread.start()
        if not started.wait(30) or self.port is None:
            raise RuntimeError("the delay proxy did not start")
        self.addCleanup(self._stop)

    def _serve(self, started):
        asyncio.set_event_loop(self._loop)
        try:
            self._server = self._loop.run_until_complete(
                asyncio.start_server(self._connection, "127.0.0.1", 0))
            self.port = self._server.sockets[0].getsockname()[1]
        finally:
            started.set()
        self._loop.run_forever()
        self._loop.close()

    def _stop(self):
        def stop():
            self._server.close()
            for task in asyncio.all_tasks(self._loop):
                task.cancel()
            self._loop.stop()

        self._loop.call_soon_threadsafe(stop)
        self._thread.join(30)

    async def _connection(self, client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(
                *self.target)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(
            self._pump(client_reader, server_writer, delayed=False),
            self._pump(server_reader, client_writer, delayed=True),
            return_exceptions=True)

    async def _pump(self, reader, writer, delayed):
        loop = asyncio.get_running_loop()
        due = 0.0
        try:
            while True:
                data = await reader.read(CHUNK)
                if delayed:
                    # Never before the chunk read earlier: in order, also
                    # when the delay was just made shorter.
                    due = max(due, loop.time() + self.delay)
                    loop.call_at(due, self._write, writer, data)
                else:
                    self._write(writer, data)
                if not data:
                    return
        except (OSError, asyncio.CancelledError):
            writer.close()

    @staticmethod
    def _write(writer, data):
        if writer.is_closing():
            return
        if data:
            writer.write(data)
        else:
            writer.close()
