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

"""Sphinx configuration of the murano-cidr documentation."""

# -- General configuration ---------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "oslo_config.sphinxext",
    "oslo_config.sphinxconfiggen",
    "openstackdocstheme",
]

# oslo_config.sphinxconfiggen: the sample file, generated on every build
# from the same generator configuration as 'tox -e genconfig'.
config_generator_config_file = [
    ("../../etc/murano-cidr/murano-cidr-config-generator.conf",
     "_static/murano-cidr"),
]

master_doc = "index"
project = "murano-cidr"
copyright = "2025, murano-cidr developers"
exclude_patterns = ["build"]
pygments_style = "native"
# Literal blocks (::) are output, logs and configuration, not Python;
# commands are marked ".. code-block:: console".
highlight_language = "none"

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}

# -- openstackdocstheme ------------------------------------------------------

openstackdocs_repo_name = "openstack/murano-cidr"
openstackdocs_bug_project = "murano"
openstackdocs_bug_tag = "murano-cidr"
openstackdocs_auto_name = False

# -- HTML output -------------------------------------------------------------

html_theme = "openstackdocs"
html_static_path = ["_static"]
