"""The test doubles that ship with the code, as httpx's MockTransport ships with httpx: each
named as such, none imported by the product.

- display.py: a display server in memory (a screen painted from its windows, their
  controls, the input it was sent, scripted reactions);
- tools.py: DesktopTools on that display, with a fake accessibility tree (`fake_tools`);
- dispatch.py: a device that hands each command to a function (FunctionDispatcher);
- function_model.py: a model whose answers come from a function of the request;
- user.py: a user channel that answers from lists (ScriptedUser).

The vendors' fake servers (models/*/fake.py, models/fake_openai.py on models/fake_http.py)
stay beside the protocol each speaks.
"""
