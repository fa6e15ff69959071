"""The one rule for a route the operator sets in the environment
(`DEFAULT_<KIND>_PROVIDER`, `_MODEL`, `_BASE_URL`, `_API_KEYS`): all unset, or a provider
and a model together; a custom endpoint names its address; any other provider has a key.
The text route and the image route both read it, so both refuse to start in the same
one line naming the setting."""

from __future__ import annotations

from dataclasses import dataclass

from providers import Provider


@dataclass(frozen=True)
class EnvironmentRoute:
    kind: str  # TEXT, IMAGE: the settings' middle word
    label: str  # "the default route", "the image route"
    provider: str | None
    model: str | None
    base_url: str | None
    has_keys: bool

    def problem(self) -> str | None:
        """The line naming what a partly set route lacks, or None when it is complete or unset."""
        name = f"DEFAULT_{self.kind}"
        if (self.provider or self.model or self.base_url or self.has_keys) and not (self.provider and self.model):
            missing = f"{name}_MODEL" if self.provider else f"{name}_PROVIDER"
            return (f"Invalid setting {missing}: {self.label} needs {name}_PROVIDER and "
                    f"{name}_MODEL together (or leave every {name}_* unset)")
        if self.provider == Provider.CUSTOM and not self.base_url:
            return (f"Invalid setting {name}_BASE_URL: {name}_PROVIDER=custom needs the "
                    "endpoint's address (e.g. http://127.0.0.1:8000/v1)")
        if self.provider and self.provider != Provider.CUSTOM and not self.has_keys:
            return (f"Invalid setting {name}_API_KEYS: {name}_PROVIDER={self.provider} needs at "
                    "least one key (only custom endpoints may go without)")
        return None
