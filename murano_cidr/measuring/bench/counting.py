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

"""Count what the ``db`` driver sends its database.

:class:`Counter` listens to one SQLAlchemy engine: every statement (the
``before_cursor_execute`` event), every connection opened (``connect``),
and the DBAPI-level calls that are round trips without a statement of
their own: the pool's ping, ``COMMIT`` and ``ROLLBACK``.
"""

import collections
import contextlib

import sqlalchemy as sa

#: The dialect methods counted, by the name they are reported under.
_CALLS = {"do_ping": "ping", "do_commit": "commit",
          "do_rollback": "rollback"}


class Counter(object):
    """What was sent on one engine since the last :meth:`reset`.

    :ivar statements: the first word of each statement (``UPDATE``, ...).
    :ivar calls: how many pings, commits and rollbacks, by name.
    :ivar connects: how many new DBAPI connections were opened.
    """

    def __init__(self):
        self.statements = []
        self.calls = collections.Counter()
        self.connects = 0

    def reset(self):
        """Forget what was counted."""
        self.statements = []
        self.calls = collections.Counter()
        self.connects = 0

    @property
    def round_trips(self):
        """Statements (SQLite's ``BEGIN`` aside) and DBAPI calls."""
        return (len([s for s in self.statements if s != "BEGIN"])
                + sum(self.calls.values()))

    def _statement(self, conn, cursor, statement, parameters, context,
                   executemany):
        self.statements.append(statement.split(None, 1)[0].upper())

    def _connect(self, dbapi_connection, connection_record):
        self.connects += 1


@contextlib.contextmanager
def counting(engine):
    """Count what is sent on ``engine`` inside the block.

    :param engine: an SQLAlchemy engine.
    :returns: a :class:`Counter`, updated as the block runs.
    """
    counter = Counter()
    dialect = engine.dialect
    saved = {}
    for method, name in _CALLS.items():
        real = getattr(dialect, method)
        saved[method] = dialect.__dict__.get(method)

        def call(*args, _real=real, _name=name, **kwargs):
            counter.calls[_name] += 1
            return _real(*args, **kwargs)
        setattr(dialect, method, call)
    sa.event.listen(engine, "before_cursor_execute", counter._statement)
    sa.event.listen(engine, "connect", counter._connect)
    try:
        yield counter
    finally:
        sa.event.remove(engine, "connect", counter._connect)
        sa.event.remove(engine, "before_cursor_execute", counter._statement)
        for method, previous in saved.items():
            if previous is None:
                delattr(dialect, method)
            else:
                setattr(dialect, method, previous)
