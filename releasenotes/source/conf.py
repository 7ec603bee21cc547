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

"""Sphinx configuration of the murano-cidr release notes."""

extensions = [
    "openstackdocstheme",
    "reno.sphinxext",
]

master_doc = "index"
project = "murano-cidr Release Notes"
copyright = "2025, murano-cidr developers"
exclude_patterns = []
pygments_style = "native"
highlight_language = "none"

# Release notes are not versioned by the package.
version = ""
release = ""

openstackdocs_repo_name = "openstack/murano-cidr"
openstackdocs_bug_project = "murano"
openstackdocs_bug_tag = "murano-cidr"
openstackdocs_auto_name = False

html_theme = "openstackdocs"
