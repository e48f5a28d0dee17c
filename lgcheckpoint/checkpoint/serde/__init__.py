"""Serializers turn channel values into bytes a saver can store. Start with jsonplus.py."""
