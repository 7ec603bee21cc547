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

"""The errors only operators' commands and the measuring tools raise.

An engine never raises them, so they stay out of its imports; each
subclasses a base of :mod:`murano_cidr.exceptions`, so a caller catching
those bases catches these too.
"""

from murano_cidr._i18n import _
from murano_cidr import exceptions


class SimulationError(exceptions.MuranoCidrException):
    """``murano-cidr simulate`` could not run to the end."""

    message = _("The simulation failed: %(reason)s")


class MissingExtra(exceptions.MuranoCidrException):
    """A tool needs a library that only one of the extras installs."""

    message = _("%(command)s needs %(module)s, which is not installed; run "
                "'pip install murano-cidr[%(extra)s]'")


class UnknownRevision(exceptions.DatabaseNotSynced):
    """The database records a schema revision this code does not know."""

    message = _("The allocation database %(url)s is at revision "
                "%(revision)s, which this murano-cidr does not know (its "
                "newest is %(head)s): a newer murano-cidr upgraded it. "
                "Nothing was changed; upgrade murano-cidr on this host")


class AllocationConflict(exceptions.MuranoCidrException):
    """A CIDR cannot be recorded because it overlaps a live allocation."""

    message = _("%(cidr)s for owner %(owner)s in scope %(scope)s overlaps "
                "%(other_cidr)s held by owner %(other_owner)s")


class InvalidInputFile(exceptions.InvalidArgument):
    """A file given to a command cannot be read or holds bad data."""

    message = _("%(path)s: %(reason)s")


class UnexpectedCoreLibrary(InvalidInputFile):
    """A tree is not the io.murano core library the MuranoPL change fits."""

    message = _("%(path)s: %(reason)s; nothing was changed")
