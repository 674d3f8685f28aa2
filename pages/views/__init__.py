"""What the routes draw: each module turns grader records (or the class store's) into Streamlit elements."""
