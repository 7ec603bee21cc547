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

"""Measuring tools shipped with the library, never imported at run time.

``simulate`` and ``bench`` measure the drivers; a service that allocates
CIDRs never loads them, nor the libraries they draw with (tqdm,
matplotlib), which come with the extras of :data:`EXTRAS`.
"""

import importlib

from murano_cidr.operator import errors

#: The output formats of both tools' reports (``--format``).
FORMATS = ("table", "json", "csv")

#: What each extra of setup.cfg installs, for the tools that need it.
EXTRAS = {"simulate": ("tqdm", "matplotlib"), "bench": ("tqdm",)}


def require(command, extra, *modules):
    """Make sure the modules a command needs are installed, before it runs.

    :param command: the command, as the user typed it
        (``murano-cidr simulate``).
    :param extra: the extra of setup.cfg that installs them.
    :param modules: top-level module names, among ``EXTRAS[extra]``.
    :raises murano_cidr.operator.errors.MissingExtra: naming the first module
        that cannot be imported and the extra to install.
    """
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            raise errors.MissingExtra(command=command, module=module,
                                      extra=extra)
