"""The papers' own methods. Agents register themselves with :mod:`papergym.agents.base`."""

from papergym.agents.base import (
    Agent,
    AgentInfo,
    AgentUnavailableError,
    BatchedAgent,
    PerRunFromBatched,
    UnavailableAgent,
    UnknownAgentError,
    get_agent_info,
    list_agents,
    list_unavailable_agents,
    make_agent,
    make_batched_agent,
    register_agent,
)

__all__ = [
    "Agent",
    "AgentInfo",
    "AgentUnavailableError",
    "BatchedAgent",
    "PerRunFromBatched",
    "UnavailableAgent",
    "UnknownAgentError",
    "get_agent_info",
    "list_agents",
    "list_unavailable_agents",
    "make_agent",
    "make_batched_agent",
    "register_agent",
]
