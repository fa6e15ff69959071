"""The providers' own model names, offered while a member types one.

`cache` keeps the lists read (per provider, address and key fingerprint) and fetches in
the background; `routes` decides which key lists which provider for a command; `fetch`
asks the provider (`providers.listing`); `choices` picks what matches the typed text;
`offer` is what the commands call: the autocomplete choices and the unlisted-name warning.
"""
