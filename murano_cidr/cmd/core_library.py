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

"""``murano-cidr-manage murano patch-core-library``: the MuranoPL change.

Usage::

    murano-cidr-manage murano patch-core-library [--dry-run] PATH

PATH is the directory of Murano's core library package (``io.murano``,
with its ``manifest.yaml``) or a checkout of Murano's source (its
``meta/io.murano``). The command prints the unified diff of what it changed
(or, with ``--dry-run``, would change) in ``NeutronNetwork``, then what to
do next; see :mod:`murano_cidr.integration.core_library`.
"""

from murano_cidr.integration import core_library

#: How the operator re-imports the changed package into Murano.
REIMPORT = "murano-manage import-package %s --update"


def do_patch_core_library(conf):
    """Make (or show) the change; print its diff and what to do next."""
    path = conf.command.path
    result = core_library.change(path, dry_run=conf.command.dry_run)
    if not result.added:
        print("%s already has murano-cidr's MuranoPL change: nothing to do."
              % result.path)
        return
    print(result.diff(), end="")
    if conf.command.dry_run:
        print("Dry run: %s was not changed; without --dry-run this diff is "
              "applied to it." % result.path)
        return
    print("Changed %s: %s. Re-import the core library so that Murano's "
          "engines use it: %s" % (
              result.path, "; ".join(core_library.PARTS[part]
                                     for part in result.added),
              REIMPORT % result.package))


def add_command_parsers(subparsers):
    """Add the ``murano`` commands to ``murano-cidr-manage``.

    :param subparsers: the ``argparse`` sub-parsers of the command line.
    """
    murano = subparsers.add_parser(
        "murano", help="Murano's own files",
        description="Change what murano-cidr needs changed in Murano.")
    commands = murano.add_subparsers(title="murano commands",
                                     dest="murano_command")
    commands.required = True
    patch = commands.add_parser(
        "patch-core-library",
        help="add the release path (confirm after the stack push, release "
        "in .destroy) to the NeutronNetwork class of the io.murano core "
        "library, and print the diff",
        description="Add murano-cidr's optional MuranoPL change to the "
        "NeutronNetwork class of Murano's io.murano core library: deploy "
        "confirms the CIDR after the stack push, and a new .destroy "
        "releases it. The class is found through the package's "
        "manifest.yaml; a tree that does not look as expected is refused "
        "and left unchanged, and a change already made is not made again.")
    patch.add_argument(
        "path", metavar="PATH",
        help="the core library package's directory (with manifest.yaml), "
        "or a checkout of Murano's source (its meta/io.murano)")
    patch.add_argument("--dry-run", action="store_true",
                       help="print the diff without changing anything")
    patch.set_defaults(action=do_patch_core_library)
