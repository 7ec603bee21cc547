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

"""What an allocation is, and the one rule for its owner, scope and version.

Every driver, command and file reader checks owners and scopes with
:func:`validate_id` and keeps the value it returns, so that an owner means
the same thing whichever driver holds it: ``42`` and ``"42"`` are one owner
everywhere, and ``"net-1 "`` is refused everywhere (MySQL would compare it
equal to ``"net-1"``, SQLite and PostgreSQL would not).
"""

import dataclasses
import datetime
import typing

from murano_cidr import exceptions

#: The longest owner or scope accepted: the width of the database columns,
#: and of Neutron's ids with room to spare.
MAX_ID_LENGTH = 255


@dataclasses.dataclass(frozen=True)
class Allocation(object):
    """A CIDR held by an owner.

    :ivar owner: who holds it (a Neutron network id, for Murano).
    :ivar cidr: the CIDR, as a string.
    :ivar scope: where it must not overlap (a router id), or None.
    :ivar ip_version: 4 or 6.
    :ivar confirmed: False while it is only a reservation.
    :ivar created_at: when it was allocated (UTC), where the driver knows.
    :ivar released_at: None for a live allocation; for a released one that
        the driver still holds back (its subnet may still be on the
        router), when it was released (UTC).
    """

    owner: str
    cidr: str
    scope: typing.Optional[str] = None
    ip_version: int = 4
    confirmed: bool = True
    created_at: typing.Optional[datetime.datetime] = None
    released_at: typing.Optional[datetime.datetime] = None

    def to_dict(self):
        """Return the allocation as a JSON-friendly dictionary."""
        result = dataclasses.asdict(self)
        for key in ("created_at", "released_at"):
            if result[key] is not None:
                result[key] = result[key].isoformat()
        return result


def validate_id(value, name, allow_none=False):
    """Check an owner or scope and return it as the string to keep.

    The rule, the same for every driver:

    * a string, or an integer (not a bool), which becomes its decimal
      string: Murano and its tests pass integer ids;
    * not empty, at most :data:`MAX_ID_LENGTH` characters, printable
      characters only;
    * no leading or trailing white space.

    :param value: the value given by the caller.
    :param name: ``"owner"`` or ``"scope"``, for the message.
    :param allow_none: whether None is accepted (it is for a scope).
    :returns: the value as a string (None if it is None and allowed).
    :raises murano_cidr.exceptions.InvalidArgument: for anything else.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise exceptions.InvalidArgument(
            name=name, value=value,
            reason="must be a string or an integer, got %s"
            % type(value).__name__)
    if not value or not value.strip():
        raise exceptions.InvalidArgument(name=name, value=value,
                                         reason="must not be empty")
    if len(value) > MAX_ID_LENGTH:
        raise exceptions.InvalidArgument(
            name=name, value=value[:40] + "...",
            reason="is %d characters long, more than the %d allowed"
            % (len(value), MAX_ID_LENGTH))
    if not value.isprintable():
        raise exceptions.InvalidArgument(
            name=name, value=value,
            reason="must contain printable characters only")
    if value != value.strip():
        raise exceptions.InvalidArgument(
            name=name, value=value,
            reason="must not start or end with white space")
    return value


def validate_owner(owner):
    """Check an owner (see :func:`validate_id`) and return it.

    :raises murano_cidr.exceptions.InvalidArgument: for a bad owner.
    """
    return validate_id(owner, "owner")


def validate_scope(scope):
    """Check a scope, None included (see :func:`validate_id`).

    :raises murano_cidr.exceptions.InvalidArgument: for a bad scope.
    """
    return validate_id(scope, "scope", allow_none=True)


def validate_ip_version(ip_version):
    """Check an IP version and return it.

    :raises murano_cidr.exceptions.InvalidArgument: unless it is 4 or 6.
    """
    if isinstance(ip_version, bool) or ip_version not in (4, 6):
        raise exceptions.InvalidArgument(name="ip_version", value=ip_version,
                                         reason="must be 4 or 6")
    return ip_version
