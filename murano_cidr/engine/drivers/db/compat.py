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

"""What SQLAlchemy 1.3 and 1.4/2.x spell differently, found by feature.

The rest of the driver writes what 1.3.16 to 2.x all accept.
"""

import copy
import inspect

import sqlalchemy as sa

try:
    from sqlalchemy.orm import declarative_base
except ImportError:  # 1.3 has it in the declarative extension only
    from sqlalchemy.ext.declarative import declarative_base  # noqa: F401


def _positional(factory):
    first = next(iter(inspect.signature(factory).parameters.values()))
    return first.kind is inspect.Parameter.VAR_POSITIONAL


#: Whether select() and case() take columns and conditions as arguments
#: (1.4 on) rather than in one list (1.3; refused by 2.0).
_SPREAD = _positional(sa.select) and _positional(sa.case)


def select(*columns):
    """Return ``SELECT columns``, however this SQLAlchemy is asked."""
    return sa.select(*columns) if _SPREAD else sa.select(list(columns))


def case(*whens, else_=None):
    """Return ``CASE WHEN ... END`` of ``(condition, value)`` pairs."""
    return sa.case(*whens, else_=else_) if _SPREAD else sa.case(
        list(whens), else_=else_)


def scalar_subquery(statement):
    """Return a one-column select as a scalar subquery."""
    return (getattr(statement, "scalar_subquery", None)
            or statement.as_scalar)()


def dbapi_connection(connection):
    """Return the driver's connection under a Connection's pool proxy."""
    fairy = connection.connection  # its own name from 1.4.24 on
    return getattr(fairy, "dbapi_connection", None) or fairy.connection


def url_string(url, **parts):
    """Return a URL with other parts (``query=...``), password shown."""
    if hasattr(url, "set"):  # immutable, 1.4 on
        return url.set(**parts).render_as_string(hide_password=False)
    url = copy.copy(url)
    for name, value in parts.items():
        setattr(url, name, value)
    return url.__to_string__(hide_password=False)
