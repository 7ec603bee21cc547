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

doc/source/contributor/drivers.rst ("Owners and scopes") gives the rule.
"""

import dataclasses
import datetime
import typing

from murano_cidr import exceptions

#: The longest owner or scope accepted: the database columns' width.
MAX_ID_LENGTH = 255


@dataclasses.dataclass(frozen=True)
class Allocation(object):
    """A CIDR held by an owner in a scope (None: none).

    ``confirmed`` is False while it is only a reservation; ``created_at``
    (UTC) is set where the driver knows it; ``released_at`` (UTC) only for
    a released CIDR the driver still holds back.
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

    A string or an integer (its decimal string), not empty, at most
    :data:`MAX_ID_LENGTH` printable characters, no white space at its ends.

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
    """Check an owner (:func:`validate_id`) and return it.

    :raises murano_cidr.exceptions.InvalidArgument: for a bad owner.
    """
    return validate_id(owner, "owner")


def validate_scope(scope):
    """Check a scope, None included (:func:`validate_id`), and return it.

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
