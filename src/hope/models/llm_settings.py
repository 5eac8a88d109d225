"""``llm:`` settings: the model, where it is served (one URL or a list used as a pool), sampling
and retry limits. Validated before any client is built."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from hope.models.server_pool import ServerPoolSettings


class LLMSettings(BaseModel):
    """How to reach a chat model. ``base_url=None`` means the embedded server supplies it."""

    model_config = ConfigDict(extra="forbid")

    model: str
    base_url: str | list[str] | None = Field(
        default=None,
        description="one server, or a list of servers of the same model that requests are spread "
        "over (hope.models.server_pool); no URL enters the cache keys (factory.llm_identity)",
    )
    api_key_env: str | None = Field(
        default=None, description="name of the environment variable holding the API key"
    )
    concurrency: int = Field(default=4, ge=1, description="requests in flight per server")
    timeout_s: float = Field(default=120.0, gt=0, description="per attempt")
    max_retries: int = Field(
        default=4,
        ge=0,
        description="further attempts: the openai client's on network faults (backoff, "
        "Retry-After), and ours, with new seeds, on answers that fail their schema",
    )
    max_tokens: int = Field(default=512, ge=1)
    strict_schema: bool = True
    send_seed: bool = True
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="backend-specific request fields, sent as given"
    )
    pool: ServerPoolSettings = Field(default_factory=ServerPoolSettings)

    @field_validator("base_url", mode="before")
    @classmethod
    def _server_list(cls, value: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        urls = list(value)  # a Hydra ListConfig too
        if not urls or not all(isinstance(url, str) and url for url in urls):
            raise ValueError(f"llm.base_url: expected a URL or a non-empty list of them: {urls}")
        if len(set(urls)) != len(urls):
            raise ValueError(f"llm.base_url lists a server twice: {urls}")
        return urls

    @property
    def servers(self) -> list[str]:
        """The configured server URLs (empty when the embedded server supplies one)."""
        if self.base_url is None:
            return []
        return [self.base_url] if isinstance(self.base_url, str) else list(self.base_url)

    @property
    def total_concurrency(self) -> int:
        """Requests in flight over all servers: ``concurrency`` per server."""
        return self.concurrency * max(1, len(self.servers))
