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

"""Every error an engine may raise, each with its message template.

What only operators' commands and the measuring tools raise is in
:mod:`murano_cidr.operator.errors`, on these bases.
"""

from murano_cidr._i18n import _


class MuranoCidrException(Exception):
    """Base class of every murano-cidr error.

    The keyword arguments fill the class's :attr:`message` template, unless
    a ready ``message`` is given.
    """

    message = _("An unknown murano-cidr error occurred.")

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            try:
                message = self.message % kwargs
            except (KeyError, TypeError, ValueError):
                # NOTE: a bug here; do not hide the error behind another.
                message = self.message
        self.msg = str(message)
        super().__init__(self.msg)

    def __str__(self):
        return self.msg


class InvalidConfig(MuranoCidrException):
    """An option has a value that cannot work."""

    message = _("Invalid value for [%(group)s] %(option)s: %(reason)s")

    def __init__(self, message=None, option=None, reason=None,
                 group="cidr_allocator", **kwargs):
        super().__init__(message, option=option, reason=reason, group=group,
                         **kwargs)


class InvalidArgument(MuranoCidrException, ValueError):
    """A caller passed a value the allocator cannot accept."""

    message = _("Invalid %(name)s %(value)r: %(reason)s")


class InvalidCidr(InvalidArgument):
    """A string that should be a CIDR is not one."""

    message = _("Invalid CIDR %(value)r in %(name)s: %(reason)s")


class PoolExhausted(MuranoCidrException):
    """No candidate of the pool is free for the scope asked for."""

    message = _("pool %(pool)s has no free /%(prefixlen)s for scope "
                "%(scope)s (%(size)d subnets: %(allocated)d allocated, "
                "%(taken)d taken)%(held_back)s")

    def __init__(self, message=None, **kwargs):
        kwargs.setdefault("held_back", "")
        super().__init__(message, **kwargs)


class DriverNotFound(MuranoCidrException):
    """The configured driver is not installed."""

    message = _("No allocator driver named %(name)r is installed "
                "([cidr_allocator] driver); installed drivers: %(available)s")


class DriverLoadFailed(DriverNotFound):
    """The configured driver is installed but a module it needs is not."""

    message = _("The allocator driver %(name)r is installed but cannot be "
                "loaded: module %(module)s is missing (%(reason)s); "
                "%(advice)s")


class NotSupported(MuranoCidrException):
    """The driver cannot do what was asked, by design."""

    message = _("The %(driver)s driver cannot %(action)s: %(reason)s")


class CapabilityMissing(NotSupported):
    """A command needs a capability the configured driver lacks."""


class BackendUnavailable(MuranoCidrException):
    """A service the driver depends on cannot be reached."""

    message = _("%(backend)s is unavailable: %(reason)s")


class DatabaseUnavailable(BackendUnavailable):
    """The allocation database cannot be reached or keeps failing."""

    message = _("The allocation database %(url)s is unavailable: %(reason)s")


class DatabaseReadOnly(DatabaseUnavailable):
    """An SQLite database file cannot be written where it is."""

    message = _("The allocation database %(url)s cannot be written: "
                "%(cause)s (SQLite: %(reason)s). Nothing was changed and "
                "the recorded allocations are intact; make %(path)s "
                "writable again (remount it read-write), or move the file "
                "and set [cidr_allocator] state_path or "
                "[cidr_allocator_database] connection to it")


class DatabasePermissionDenied(DatabaseReadOnly):
    """This user may not enter the directory of an SQLite database file."""

    message = _("The allocation database %(url)s cannot be read: this user "
                "may not enter or read %(path)s. Nothing was changed; run "
                "the command as the user the engines run as, or give this "
                "user access to %(path)s")


class DatabaseFull(DatabaseUnavailable):
    """The file system of an SQLite database file has no space left."""

    message = _("The allocation database %(url)s cannot be written: the "
                "file system of %(path)s has no space left (%(free)d bytes "
                "free; SQLite: %(reason)s). Nothing was changed and the "
                "recorded allocations are intact; free space there, then "
                "try again")


class DatabaseNotSynced(MuranoCidrException):
    """The allocation tables are missing or older than this code."""

    message = _("The allocation database %(url)s is not at the current "
                "schema (%(reason)s); run 'murano-cidr-manage "
                "--config-file <file> db sync' first")


class ForeignTables(InvalidConfig):
    """Tables with the driver's names exist but are not the driver's."""

    message = _("The allocation database %(url)s has the tables "
                "%(tables)s, but no murano-cidr schema revision is recorded "
                "in %(version_table)s. Nothing was changed. If they are "
                "murano-cidr's, complete and at this release's schema (a "
                "'db stamp base' of an earlier release removed the "
                "revision), record it with 'murano-cidr-manage "
                "--config-file <file> db stamp head'; if a 'db sync' was "
                "interrupted or another application owns them, drop or "
                "rename them, or set [%(group)s] %(option)s to another "
                "database")

    def __init__(self, message=None, url=None, tables=(),
                 version_table=None, **kwargs):
        kwargs.setdefault("group", "cidr_allocator_database")
        kwargs.setdefault("option", "connection")
        super().__init__(message, url=url,
                         tables=", ".join(sorted(tables)),
                         version_table=version_table, **kwargs)


class LockUnavailable(BackendUnavailable):
    """The lock service cannot be reached, so nothing was allocated."""

    message = _("The lock service %(url)s is unavailable, no CIDR was "
                "allocated: %(reason)s")


class ReservationLost(MuranoCidrException):
    """A reservation's lock expired or was lost before it was confirmed."""

    message = _("The reservation of %(cidr)s for owner %(owner)s was lost "
                "before it was confirmed (%(reason)s): if its subnet is on "
                "the router already, the router keeps the CIDR and nothing "
                "needs doing; if not, another engine may take it: release "
                "it and allocate again before creating the subnet")


class OwnerConflict(MuranoCidrException):
    """An owner already holds a different CIDR."""

    message = _("Owner %(owner)s already holds %(cidr)s in scope %(scope)s")
