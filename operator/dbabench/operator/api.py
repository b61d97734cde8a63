"""The operator's few calls to the Kubernetes API (blocking client, run in threads)."""

from __future__ import annotations

import asyncio
from typing import Any

from kubernetes import client, config
from kubernetes.client.rest import ApiException

from dbabench.model.crd import GROUP, VERSION


class KubeApi:
    def __init__(self) -> None:
        try:
            config.load_incluster_config()
        except config.ConfigException:
            config.load_kube_config()
        self.custom = client.CustomObjectsApi()

    async def get(self, namespace: str, plural: str, name: str) -> dict[str, Any] | None:
        try:
            return await asyncio.to_thread(self.custom.get_namespaced_custom_object, GROUP,
                                           VERSION, namespace, plural, name)
        except ApiException as e:
            if e.status == 404:
                return None
            raise

    async def patch_status(self, namespace: str, plural: str, name: str,
                           status: dict[str, Any]) -> None:
        await asyncio.to_thread(self.custom.patch_namespaced_custom_object_status, GROUP,
                                VERSION, namespace, plural, name, {"status": status})

    async def create_once(self, namespace: str, plural: str, body: dict[str, Any]) -> dict[str, Any]:
        """Create ``body``; if an object of that name exists, return it instead.

        The name is deterministic, so a run graded twice (an operator restarted between
        creating the Evaluation and recording it) still has exactly one."""
        try:
            return await asyncio.to_thread(self.custom.create_namespaced_custom_object, GROUP,
                                           VERSION, namespace, plural, body)
        except ApiException as e:
            if e.status != 409:
                raise
        existing = await self.get(namespace, plural, body["metadata"]["name"])
        assert existing is not None
        return existing


def owner_reference(body: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": body["apiVersion"], "kind": body["kind"],
            "name": body["metadata"]["name"], "uid": body["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True}
