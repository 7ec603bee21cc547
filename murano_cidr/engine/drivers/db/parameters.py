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

"""The ``db`` driver's ``connection_parameters``, parsed.

Loaded only when the operator gives some (see
:func:`murano_cidr.engine.drivers.db.connection.connect_url`).
"""

from urllib import parse

from murano_cidr import exceptions


def parsed(text, group):
    """Parse ``connection_parameters``.

    :param text: ``param1=value1&param2=value2``, or empty.
    :param group: the option group, for messages.
    :returns: a dict.
    :raises murano_cidr.exceptions.InvalidConfig: for parameters that
        cannot be parsed, are given twice or have no value.
    """
    if not text:
        return {}
    try:
        pairs = parse.parse_qsl(text, keep_blank_values=True,
                                strict_parsing=True)
    except ValueError as e:
        raise exceptions.InvalidConfig(
            group=group, option="connection_parameters",
            reason="%r is not param1=value1&param2=value2 (%s)" % (text, e))
    names = [name for name, _ in pairs]
    for name, value in pairs:
        if names.count(name) > 1:
            reason = "%s is given twice" % name
        elif not value:
            reason = "%s has no value" % name
        else:
            continue
        raise exceptions.InvalidConfig(group=group,
                                       option="connection_parameters",
                                       reason=reason)
    return dict(pairs)
